/// What the driver must do after an event. Every action names the generation it is for; the driver re-checks it
/// before acting, so a close for generation 3 can never cancel the transport of generation 4.
public enum SessionAction: Equatable, Sendable {
    /// Nothing to do (check `SessionMachine.nextWake` for the next timer).
    case none
    /// Create a new transport for `generation` and report its events with that generation.
    case openTransport(generation: Int)
    /// Send a ping with request id `ping` on the transport of `generation`; report the pong or the failure with it.
    case sendPing(generation: Int, ping: UInt64)
    /// Close the transport of `generation` with close `code`. Its later events are stale.
    case closeTransport(generation: Int, reason: CloseReason, code: UInt16)
}
