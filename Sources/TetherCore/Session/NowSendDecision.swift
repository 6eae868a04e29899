/// The machine's answer to a `.now` send that found no direct route.
public enum NowSendDecision: Equatable, Sendable {
    /// No open session: throw `notOpen`, nothing sent.
    case refused
    /// The outbox was written meanwhile: write to the connection of `generation` now.
    case direct(generation: Int)
    /// Parked behind the outbox, last of `count` parked sends: the driver keeps it, in order, until a
    /// `.writeParkedSend` takes it or a `.parkedSendsRefused` notice refuses it.
    case parked(count: Int)
}
