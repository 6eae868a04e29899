#if os(Linux)
import CTetherLinux
import Dispatch
import Glibc
import Synchronization

/// Why a `RouteNetlinkReader` could not start, or stopped reading.
package enum NetlinkReaderError: Error, Equatable, Sendable {
    /// The namespace file could not be opened (`errno`).
    case namespaceUnavailable(path: String, errno: Int32)
    /// `setns(CLONE_NEWNET)` into the namespace failed (`errno`; `EPERM` without `CAP_SYS_ADMIN`).
    case namespaceSwitchFailed(path: String, errno: Int32)
    /// A socket call failed: `operation` names it (`eventfd`, `socket`, `bind`, `send`, `recv`, `poll`, ...).
    case socketFailed(operation: String, errno: Int32)
    /// The kernel refused a dump request (`errno`); thrown by a handler.
    case dumpRefused(errno: Int32)
}

/// What a `RouteNetlinkReader` does with the kernel's messages: the protocol logic, free of I/O. The reader's
/// thread owns it and calls it one call at a time.
package protocol RouteNetlinkHandler: SendableMetatype {
    /// The requests that bring the handler's view in sync: sent when the reader starts, and again (after the
    /// datagrams already queued are read) when the kernel reports that it dropped notifications.
    mutating func resynchronize() -> [[UInt8]]
    /// One datagram from the kernel; returns the requests it leads to, or throws to stop the reader.
    mutating func receive(_ datagram: [UInt8]) throws(NetlinkReaderError) -> [[UInt8]]
    /// The reader stopped on `error` (a socket call failed or `receive` threw); nothing more will come.
    mutating func stopped(by error: NetlinkReaderError)
}

/// One `AF_NETLINK`/`NETLINK_ROUTE` socket subscribed to multicast `groups`, read by a dedicated thread that
/// blocks in `poll()` (no timers), optionally inside another network namespace: only that thread enters it
/// (`setns`), so the caller's namespace never changes. The datagrams go to a `RouteNetlinkHandler`; the
/// requests it returns go back to the kernel.
package final class RouteNetlinkReader: Sendable {
    private let failureState = Mutex<NetlinkReaderError?>(nil)
    private let overruns = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let wakeup: WakeupSignal
    /// Signalled when the thread has closed its socket and ended.
    package let threadEnded = DispatchSemaphore(value: 0)

    private init(wakeup: WakeupSignal) {
        self.wakeup = wakeup
    }

    /// Why the thread stopped reading on its own; `nil` while it reads and after a plain `stop()`.
    package var failure: NetlinkReaderError? { self.failureState.withLock { $0 } }

    /// How many times the kernel reported dropped notifications (and the handler resynchronized).
    package var overrunCount: Int { self.overruns.load(ordering: .relaxed) }

    /// Ends the thread; it closes the socket. Safe to call from any thread, any number of times.
    package func stop() {
        self.stopRequested.store(true, ordering: .releasing)
        self.wakeup.signal()
    }

    private var isStopped: Bool { self.stopRequested.load(ordering: .acquiring) }

    /// Starts the thread and returns once it has entered the namespace and bound its socket.
    ///
    /// - Parameters:
    ///   - namespace: a network namespace file (for example `/var/run/netns/test`), or `nil` for the caller's.
    ///   - groups: the `RTMGRP_*` multicast groups to subscribe to.
    ///   - receiveBufferSize: the socket's receive buffer in bytes (best effort: the forced variant needs
    ///     `CAP_NET_ADMIN`, the plain one is capped by `net.core.rmem_max`).
    ///   - handler: owned by the thread from now on.
    /// - Throws: `NetlinkReaderError` when the namespace or the socket cannot be opened, or no thread started.
    package static func launch<Handler: RouteNetlinkHandler>(
        namespace: String?,
        groups: UInt32,
        receiveBufferSize: Int32,
        handler: sending Handler
    ) throws(NetlinkReaderError) -> RouteNetlinkReader {
        let reader = RouteNetlinkReader(wakeup: try WakeupSignal())
        let handler = ThreadOwned(handler)
        let opened = Mutex<Result<Int32, NetlinkReaderError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let body = ThreadBody {
            let result = Result { () throws(NetlinkReaderError) -> Int32 in
                try Self.openSocket(namespace: namespace, groups: groups, receiveBufferSize: receiveBufferSize)
            }
            opened.withLock { $0 = result }
            ready.signal()
            if case .success(let socket) = result {
                handler.value.withLock { handler in reader.run(socket: socket, handler: &handler) }
                Glibc.close(socket)
            }
            reader.threadEnded.signal()
        }
        let context = Unmanaged.passRetained(body)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context.toOpaque())
        guard created == 0 else {
            context.release()
            throw .socketFailed(operation: "pthread_create", errno: created)
        }
        pthread_detach(thread)
        GNUExtensions.setThreadName.map { _ = $0(thread, "tether-netlink") }
        ready.wait()
        switch opened.withLock({ $0 }) {
        case .success:
            return reader
        case .failure(let error):
            throw error
        case nil:
            preconditionFailure("the thread signals readiness only after recording the result")
        }
    }

    /// Runs on the thread: enters the namespace (this thread only), then opens and binds the socket.
    private static func openSocket(
        namespace: String?,
        groups: UInt32,
        receiveBufferSize: Int32
    ) throws(NetlinkReaderError) -> Int32 {
        if let namespace {
            let namespaceFile = open(namespace, O_RDONLY | O_CLOEXEC)
            guard namespaceFile >= 0 else { throw .namespaceUnavailable(path: namespace, errno: errno) }
            defer { Glibc.close(namespaceFile) }
            guard let setns = GNUExtensions.setns else { throw .namespaceSwitchFailed(path: namespace, errno: ENOSYS) }
            guard setns(namespaceFile, GNUExtensions.cloneNewNet) == 0 else {
                throw .namespaceSwitchFailed(path: namespace, errno: errno)
            }
        }
        let socketType = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let socket = Glibc.socket(AF_NETLINK, socketType, NETLINK_ROUTE)
        guard socket >= 0 else { throw .socketFailed(operation: "socket", errno: errno) }
        // A larger receive buffer makes overruns (and the resynchronization they cost) rarer.
        var receiveBuffer = receiveBufferSize
        let optionSize = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(socket, SOL_SOCKET, SO_RCVBUFFORCE, &receiveBuffer, optionSize) != 0 {
            _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, optionSize)
        }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = groups
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            Glibc.close(socket)
            throw .socketFailed(operation: "bind", errno: error)
        }
        return socket
    }

    /// Runs on the thread until stopped or failed.
    private func run<Handler: RouteNetlinkHandler>(socket: Int32, handler: inout Handler) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        do throws(NetlinkReaderError) {
            try Self.send(handler.resynchronize(), on: socket)
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: self.wakeup.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            while !self.isStopped {
                guard poll(&descriptors, 2, -1) >= 0 else {
                    if errno == EINTR { continue }
                    throw .socketFailed(operation: "poll", errno: errno)
                }
                if descriptors[1].revents != 0 { return }
                if descriptors[0].revents != 0 {
                    try self.drain(socket: socket, buffer: &buffer, handler: &handler)
                }
            }
        } catch {
            self.failureState.withLock { $0 = error }
            handler.stopped(by: error)
        }
    }

    /// Reads every pending datagram, then sends the requests they led to: a dump request sent while the queue is
    /// still full after an overrun would be refused with `ENOBUFS`.
    private func drain<Handler: RouteNetlinkHandler>(
        socket: Int32,
        buffer: inout [UInt8],
        handler: inout Handler
    ) throws(NetlinkReaderError) {
        var requests: [[UInt8]] = []
        while !self.isStopped {
            var sender = sockaddr_nl()
            var flags: Int32 = 0
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) { senderPointer in
                    var vector = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr()
                        header.msg_name = UnsafeMutableRawPointer(senderPointer)
                        header.msg_namelen = socklen_t(MemoryLayout<sockaddr_nl>.size)
                        header.msg_iov = vectorPointer
                        header.msg_iovlen = 1
                        let count = recvmsg(socket, &header, 0)
                        flags = header.msg_flags
                        return count
                    }
                }
            }
            if count < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK:
                    try Self.send(requests, on: socket)
                    return
                case EINTR: continue
                case ENOBUFS:
                    // The kernel dropped notifications: the handler's view may be stale.
                    self.overruns.add(1, ordering: .relaxed)
                    requests += handler.resynchronize()
                    continue
                default: throw .socketFailed(operation: "recv", errno: errno)
                }
            }
            // Only the kernel (port 0) speaks for the namespace; others could only be privileged senders.
            guard sender.nl_pid == 0 else { continue }
            if flags & Int32(MSG_TRUNC) != 0 {
                self.overruns.add(1, ordering: .relaxed)
                requests += handler.resynchronize()
                continue
            }
            requests += try handler.receive(Array(buffer[0..<count]))
        }
    }

    private static func send(_ requests: [[UInt8]], on socket: Int32) throws(NetlinkReaderError) {
        var kernel = sockaddr_nl()
        kernel.nl_family = sa_family_t(AF_NETLINK)
        for request in requests {
            while true {
                let length = socklen_t(MemoryLayout<sockaddr_nl>.size)
                let sent = request.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &kernel) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(socket, bytes.baseAddress, bytes.count, 0, $0, length)
                        }
                    }
                }
                if sent >= 0 { break }
                if errno == EINTR { continue }
                throw .socketFailed(operation: "send", errno: errno)
            }
        }
    }
}

/// A value handed to the reader's thread, which alone uses it; the lock is never contended and only makes the
/// transfer checkable.
private final class ThreadOwned<Value>: Sendable {
    let value: Mutex<Value>

    init(_ value: sending Value) {
        self.value = Mutex(value)
    }
}

/// The body of the reader's thread, passed through `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}

/// An eventfd that wakes the reader's thread for `stop()`. Shared by the reader and its thread and closed when
/// both are gone, so a late `stop()` never writes to a closed (and possibly reused) descriptor.
private final class WakeupSignal: Sendable {
    let descriptor: Int32

    init() throws(NetlinkReaderError) {
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else { throw .socketFailed(operation: "eventfd", errno: errno) }
        self.descriptor = descriptor
    }

    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(self.descriptor, $0.baseAddress, $0.count) }
    }

    deinit {
        Glibc.close(self.descriptor)
    }
}
#endif
