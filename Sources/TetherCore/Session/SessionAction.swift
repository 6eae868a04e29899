/// What the driver must do after an event. Every action names the generation it is for, always a live one (the
/// machine decides which connection); the driver looks the transport up by it and checks nothing else, so a close
/// for generation 3 can never cancel the transport of generation 4.
public enum SessionAction: Equatable, Sendable {
    /// Nothing to do (check `SessionMachine.nextWake` for the next timer).
    case none
    /// Create a new transport for `generation` and report its events with that generation; `held`: the consumer
    /// is behind (`SessionMachine.readingHeld`), so the transport starts with reading held until `.holdReading(false)`.
    case openTransport(generation: Int, held: Bool = false)
    /// Send a ping with request id `ping` on the transport of `generation`; report the pong or the failure with it.
    case sendPing(generation: Int, ping: UInt64)
    /// Close the transport of `generation` with close `code`. Its later events are stale. `reportSent`: someone
    /// waits for the close frame to leave (`enteredBackground`): report `closeSent` once it was handed to the kernel
    /// or the platform (the machine stops waiting at its own deadline, `closeTimeout`, whatever happens).
    case closeTransport(generation: Int, reason: CloseReason, code: UInt16, reportSent: Bool = false)
    /// The transport of `generation` opened: send the greeting on it, every message in order, before anything else;
    /// then report `greetingSent`. Only with `SessionConfiguration.greets`.
    case sendGreeting(generation: Int)
    /// Write the queued message of `ticket` to the transport of `generation`; report how it went with
    /// `writeFinished`. One write is in flight at a time.
    case writeQueued(generation: Int, ticket: Int)
    /// Write the first parked `.now` send to the transport of `generation` (its caller gets the outcome); report
    /// how it went with `writeFinished`.
    case writeParkedSend(generation: Int)
    /// Stop (`true`) or resume reading every transport: the consumer fell behind or caught up
    /// (`consumerBacklogChanged`). A transport opened later starts held while `SessionMachine.readingHeld`.
    case holdReading(Bool)
}

/// What the driver does with a received message: the machine's decision (`SessionMachine.messageReceived`).
public enum MessageDelivery: Equatable, Sendable {
    /// Hand it to the consumer: it was read from the latest generation's transport, which has not ended yet
    /// (whatever the phase: connecting, open, suspended in the background, or in its closing handshake).
    case deliver
    /// Drop it: a leftover of a generation that is no longer current or has ended (counted in `staleEvents` and
    /// recorded as a `.stale` record).
    case discard
}
