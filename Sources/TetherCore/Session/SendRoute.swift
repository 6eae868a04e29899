/// Where a `.now` send goes, as the machine decides it (`SessionMachine.sendRoute`). A driver publishes it where
/// senders read it without waiting for the driver.
public enum SendRoute: Equatable, Sendable {
    /// No open session: `.now` throws `notOpen`.
    case closed
    /// Open, nothing queued or in flight: `.now` writes straight to the connection of `generation`.
    case direct(generation: Int)
    /// Open on `generation`, but queued messages (or a write still in flight) go first: `.now` asks the machine
    /// (`nowSendArrived`), which parks it behind them.
    case behindOutbox(generation: Int)
}
