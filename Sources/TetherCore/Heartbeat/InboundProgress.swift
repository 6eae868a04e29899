/// What a connection has received so far, as its transport sees it at one moment: the fact that can explain a
/// late pong (docs/ARCHITECTURE.md §3). TCP delivers the peer's pong behind whatever the peer sent before it, and a
/// control frame cannot enter the middle of a frame: while the bytes of a large frame keep arriving, the pong may be
/// queued behind it. Whole frames do not explain a missing pong (the peer could have put it between them).
///
/// A transport reports it when asked (`TransportConnection.inboundProgress()`), with times as durations before that
/// moment; `SessionMachine.inboundProgressReported(generation:_:now:)` takes it at the pong deadline.
public struct InboundProgress: Equatable, Hashable, Sendable {
    /// Frames received whole on the connection so far: data, control and continuation frames alike.
    public var framesCompleted: Int
    /// Part of the next frame has arrived (its header, or some of its payload) and the rest has not.
    public var frameInProgress: Bool
    /// How long before the report the latest bytes arrived; nil when none has arrived yet.
    public var sinceLastByte: Duration?
    /// How long before the report the bytes that completed the latest whole frame arrived; nil before the first.
    public var sinceLastFrameCompleted: Duration?
    /// The ping id (`SessionAction.sendPing`'s) of the latest pong the transport has decoded; nil before the first,
    /// or when the transport cannot say. The transport reports what it has received, which can be ahead of the
    /// events the machine has handled: a pong decoded by the same read that completed a large frame may still be on
    /// its way. Such a pong is not late; the machine waits for it.
    public var latestPongID: UInt64?
    /// How long before the report the bytes that brought that pong arrived; nil when the transport cannot say. A
    /// pong is on time when it arrived before its deadline, whenever its event is handled, and late when it arrived
    /// at or after it: whether the deadline or the pong's event is handled first then changes nothing.
    public var sinceLatestPong: Duration?

    public init(
        framesCompleted: Int, frameInProgress: Bool, sinceLastByte: Duration?, sinceLastFrameCompleted: Duration?,
        latestPongID: UInt64? = nil, sinceLatestPong: Duration? = nil
    ) {
        self.framesCompleted = framesCompleted
        self.frameInProgress = frameInProgress
        self.sinceLastByte = sinceLastByte
        self.sinceLastFrameCompleted = sinceLastFrameCompleted
        self.latestPongID = latestPongID
        self.sinceLatestPong = sinceLatestPong
    }
}

extension InboundProgress {
    /// The same facts in milliseconds of the clock that reads `now`: when the latest bytes arrived and when the
    /// latest whole frame was completed. A duration is rounded up, so that a time is never later than the bytes.
    func arrival(now: Int) -> PingSchedule.Arrival {
        PingSchedule.Arrival(
            framesCompleted: self.framesCompleted, frameInProgress: self.frameInProgress,
            lastByteAt: self.sinceLastByte.map { now - Self.millisecondsRoundedUp($0) },
            lastFrameCompletedAt: self.sinceLastFrameCompleted.map { now - Self.millisecondsRoundedUp($0) },
            latestPongID: self.latestPongID,
            latestPongAt: self.sinceLatestPong.map { now - Self.millisecondsRoundedUp($0) })
    }

    private static func millisecondsRoundedUp(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = max(duration, .zero).components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return Int.max / 2 }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(clamping: milliseconds + fraction)
    }
}
