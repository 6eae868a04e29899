// Placeholder until the event loop lands.
