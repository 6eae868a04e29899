#if os(Linux)
import TetherPOSIX

/// On Linux a client's events are yielded on its event loop, which resumes the readers it woke at the end of its
/// turn: the readers of the clients whose timers or reads came in one turn reach the thread pool together.
extension EventLoop: WakeBatcher {
    var isCurrent: Bool { self.inEventLoop }

    func deferToEndOfTurn(_ work: @escaping @Sendable () -> Void) {
        self.atEndOfTurn(work)
    }
}
#endif
