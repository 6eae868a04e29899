// Placeholder until the test server lands.
