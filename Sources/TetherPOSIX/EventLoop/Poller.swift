#if os(Linux)
import Glibc
#if canImport(CTetherLinux)
import CTetherLinux
#endif

/// What a registered descriptor wants to hear about.
struct Interest: OptionSet, Sendable {
    let rawValue: UInt8
    static let readable = Interest(rawValue: 1)
    static let writable = Interest(rawValue: 2)
}

/// What the kernel reported for a descriptor.
struct Readiness: Sendable {
    var readable: Bool
    var writable: Bool
    /// The peer closed its side (EPOLLRDHUP) or the connection is fully shut (EPOLLHUP).
    var hangUp: Bool
    /// An error is pending on the socket (EPOLLERR); read it with `SO_ERROR`.
    var error: Bool
}

/// A level-triggered epoll instance plus an eventfd that wakes it from other threads.
///
/// Only descriptors go in here; the registration id stored with each is what the loop uses to find
/// the owner, so a descriptor number reused after `close` can never reach a stale owner.
struct Poller: Sendable {
    let epollFD: Int32
    let wakeFD: Int32
    /// The registration id reserved for the wake-up eventfd.
    static let wakeID: UInt64 = 0

    init() throws(SocketError) {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError(operation: "epoll_create1", errno: errno) }
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let code = errno
            Socket.close(epollFD)
            throw SocketError(operation: "eventfd", errno: code)
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        do {
            try self.control(EPOLL_CTL_ADD, fd: wakeFD, id: Self.wakeID, interest: .readable)
        } catch {
            Socket.close(epollFD)
            Socket.close(wakeFD)
            throw error
        }
    }

    func add(_ fd: Int32, id: UInt64, interest: Interest) throws(SocketError) {
        try self.control(EPOLL_CTL_ADD, fd: fd, id: id, interest: interest)
    }

    func modify(_ fd: Int32, id: UInt64, interest: Interest) throws(SocketError) {
        try self.control(EPOLL_CTL_MOD, fd: fd, id: id, interest: interest)
    }

    func remove(_ fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(self.epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    private func control(_ operation: Int32, fd: Int32, id: UInt64, interest: Interest) throws(SocketError) {
        var event = epoll_event()
        var mask: UInt32 = 0
        if interest.contains(.readable) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.writable) { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.u64 = id
        guard epoll_ctl(self.epollFD, operation, fd, &event) == 0 else {
            throw SocketError(operation: "epoll_ctl", errno: errno)
        }
    }

    /// Waits up to `timeout` ms (-1: forever) and returns how many entries of `events` were filled.
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, timeout: Int32) -> Int {
        let count = epoll_wait(self.epollFD, events.baseAddress, Int32(events.count), timeout)
        return count < 0 ? 0 : Int(count)  // EINTR: the loop simply goes round again
    }

    static func readiness(of event: epoll_event) -> Readiness {
        let mask = event.events
        return Readiness(
            readable: mask & EPOLLIN.rawValue != 0,
            writable: mask & EPOLLOUT.rawValue != 0,
            hangUp: mask & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue) != 0,
            error: mask & EPOLLERR.rawValue != 0
        )
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(self.wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    func consumeWake() {
        var count: UInt64 = 0
        _ = read(self.wakeFD, &count, MemoryLayout<UInt64>.size)
    }

    func close() {
        Socket.close(self.epollFD)
        Socket.close(self.wakeFD)
    }
}
#endif
