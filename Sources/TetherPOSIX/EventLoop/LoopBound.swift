import Synchronization
import Glibc

/// Which thread runs an event loop, so that loop-confined state can check it is used on that thread.
final class LoopThreadIdentity: Sendable {
    private let threadID = Atomic<UInt>(0)
    private let exited = Atomic<Bool>(false)

    func adoptCurrentThread() {
        self.threadID.store(Self.currentThreadID, ordering: .releasing)
    }

    /// Called as the loop thread's last act: from now on no thread is the loop thread.
    func threadExited() {
        self.threadID.store(0, ordering: .releasing)
        self.exited.store(true, ordering: .releasing)
    }

    /// `true` once the loop thread has exited (after `EventLoop.shutdown`).
    var hasExited: Bool { self.exited.load(ordering: .acquiring) }

    var isCurrent: Bool {
        self.threadID.load(ordering: .acquiring) == Self.currentThreadID
    }

    private static var currentThreadID: UInt {
        UInt(pthread_self())
    }
}

/// A value that may be used only on one event loop's thread, carried across isolation boundaries.
///
/// Protocol layers keep their mutable state in one (a codec, a handler, a close-handshake timer) and
/// reach it from the loop's callbacks; the wrapper itself is `Sendable`, so it can be captured by
/// `execute` and timer closures and stored in `Sendable` classes.
///
/// Every access to `value` traps when not on the loop's thread.
package final class LoopBound<Value>: @unchecked Sendable {
    // @unchecked Sendable is safe because `_value` is only read or written after `precondition`
    // has checked that the caller is the single thread of the owning loop; the value is handed
    // over at `init` with `sending`, so no other reference to it remains elsewhere.
    private var _value: Value
    private let identity: LoopThreadIdentity

    #if os(Linux)
    /// Wraps `value`, which from now on belongs to `loop`'s thread.
    /// - Parameter value: transferred (`sending`): the caller keeps no other reference to it.
    package init(_ value: sending Value, loop: EventLoop) {
        self._value = value
        self.identity = loop.identity
    }
    #endif

    init(_ value: sending Value, identity: LoopThreadIdentity) {
        self._value = value
        self.identity = identity
    }

    /// The value, for a `deinit` that runs after the loop's thread has exited: no loop thread can
    /// touch it any more, and a `deinit` has the last reference to its owner.
    var valueAfterLoopExit: Value {
        precondition(self.identity.hasExited, "LoopBound value used off its event loop thread")
        return self._value
    }

    /// The wrapped value. Traps unless called on the loop's thread.
    package var value: Value {
        get {
            precondition(self.identity.isCurrent, "LoopBound value used off its event loop thread")
            return self._value
        }
        _modify {
            precondition(self.identity.isCurrent, "LoopBound value used off its event loop thread")
            yield &self._value
        }
    }
}
