#if canImport(CTetherLinux)
import CTetherLinux
import Foundation
import Glibc
import Synchronization

/// Why a `NetlinkPathMonitor` could not start, or stopped watching.
public enum NetlinkPathMonitorError: Error, Equatable, Sendable {
    /// The namespace file could not be opened (`errno`).
    case namespaceUnavailable(path: String, errno: Int32)
    /// `setns(CLONE_NEWNET)` into the namespace failed (`errno`; `EPERM` without `CAP_SYS_ADMIN`).
    case namespaceSwitchFailed(path: String, errno: Int32)
    /// A socket call failed: `operation` names it (`socket`, `bind`, `getsockname`, `send`, `recv`, `poll`).
    case socketFailed(operation: String, errno: Int32)
    /// The kernel refused a dump request (`errno`).
    case dumpRefused(errno: Int32)
}

/// A `PathMonitor` on rtnetlink: one `AF_NETLINK`/`NETLINK_ROUTE` socket subscribed to link, IPv4/IPv6 address
/// and IPv4/IPv6 route notifications, read by one dedicated thread that blocks in `poll()` (no timers).
///
/// How Linux maps to a snapshot:
/// - `satisfied` when an IPv4 or IPv6 default route of the main table goes through a link that is up, running
///   and not loopback, and that link has an address of the route's family with global or site scope that is not
///   tentative; `unsatisfied` otherwise. `requiresConnection` is never reported: the kernel has no on-demand
///   connection state.
/// - `interfaces`: one kind per link carrying such a route, lowest route metric first; `interfaceNames`: their
///   names, so that a move between two links of one kind (`eth0` to `eth1`) is a visible change. The kind
///   comes from the link type and name: loopback; cellular for raw-IP links, `wwan` links and names `ww*`, `rmnet*`,
///   `ccmni*`; Wi-Fi for Ethernet-type links named `wl*`; wired Ethernet for other Ethernet-type links
///   (including veth and bridges); other for everything else (tun, WireGuard, PPP).
/// - `isExpensive` when the preferred (first) interface is cellular. `isConstrained` is always `false`:
///   Linux has no Low Data Mode.
///
/// The monitor starts its thread and socket in `init` and keeps its model current from then on; `start`
/// delivers the current path as soon as the first dump is complete. It re-dumps everything when the kernel
/// reports lost messages (`ENOBUFS`). One-shot: a cancelled monitor cannot restart; create a new one.
/// Routes using nexthop objects (`RTA_NH_ID`) name no output link and are not counted.
public final class NetlinkPathMonitor: PathMonitor {
    /// The network namespace watched (a path such as `/var/run/netns/NAME`), or `nil` for the caller's.
    public let namespace: String?
    private let loop: NetlinkMonitorLoop

    /// Opens the socket in the namespace and starts the monitor thread.
    ///
    /// - Parameter namespace: a network namespace file (for example `/var/run/netns/test`); only the monitor's
    ///   own thread enters it, so the caller's namespace never changes. Defaults to `nil`, the namespace of
    ///   the calling process. Entering a namespace needs `CAP_SYS_ADMIN`.
    /// - Throws: `NetlinkPathMonitorError` when the namespace or the socket cannot be opened.
    public convenience init(namespace: String? = nil) throws(NetlinkPathMonitorError) {
        try self.init(namespace: namespace, receiveBufferSize: 1 << 20)
    }

    /// - Parameter receiveBufferSize: the socket's receive buffer in bytes; tests make it tiny to force overruns.
    init(namespace: String?, receiveBufferSize: Int32) throws(NetlinkPathMonitorError) {
        self.namespace = namespace
        self.loop = try NetlinkMonitorLoop.launch(namespace: namespace, receiveBufferSize: receiveBufferSize)
    }

    public func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) {
        self.loop.delivery.start(handler)
    }

    public func cancel() {
        self.loop.stop()
    }

    /// Why the monitor thread stopped watching on its own (the monitor then delivers nothing more);
    /// `nil` while it watches and after a plain `cancel()`.
    public var failure: NetlinkPathMonitorError? {
        self.loop.failure.withLock { $0 }
    }

    /// How many times the kernel reported lost notifications and the monitor dumped everything again.
    var overrunCount: Int {
        self.loop.overrunCount.load(ordering: .relaxed)
    }

    /// Signalled when the monitor thread has closed its socket and ended (for tests).
    var threadEnded: DispatchSemaphore { self.loop.threadEnded }

    deinit {
        self.loop.stop()
    }
}

/// An eventfd that wakes the monitor thread for cancellation. Shared by the monitor and its thread and closed
/// when both are gone, so a late `stop()` never writes to a closed (and possibly reused) descriptor.
private final class WakeupSignal: Sendable {
    let descriptor: Int32

    init() throws(NetlinkPathMonitorError) {
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else { throw .socketFailed(operation: "eventfd", errno: errno) }
        self.descriptor = descriptor
    }

    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(self.descriptor, $0.baseAddress, $0.count) }
    }

    deinit {
        close(self.descriptor)
    }
}

/// The state shared by a `NetlinkPathMonitor` and its thread.
private final class NetlinkMonitorLoop: Sendable {
    let delivery = PathSnapshotDelivery()
    let failure = Mutex<NetlinkPathMonitorError?>(nil)
    let overrunCount = Atomic<Int>(0)
    let threadEnded = DispatchSemaphore(value: 0)
    private let wakeup: WakeupSignal

    private init(wakeup: WakeupSignal) {
        self.wakeup = wakeup
    }

    func stop() {
        self.delivery.cancel()
        self.wakeup.signal()
    }

    /// Starts the thread and waits until it has entered the namespace and bound its socket.
    static func launch(
        namespace: String?,
        receiveBufferSize: Int32
    ) throws(NetlinkPathMonitorError) -> NetlinkMonitorLoop {
        let loop = NetlinkMonitorLoop(wakeup: try WakeupSignal())
        let opened = Mutex<Result<Int32, NetlinkPathMonitorError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Result { () throws(NetlinkPathMonitorError) -> Int32 in
                try Self.openSocket(namespace: namespace, receiveBufferSize: receiveBufferSize)
            }
            opened.withLock { $0 = result }
            ready.signal()
            if case .success(let socket) = result {
                loop.run(socket: socket)
                close(socket)
            }
            loop.threadEnded.signal()
        }
        thread.name = "tether.netlink-path"
        thread.start()
        ready.wait()
        switch opened.withLock({ $0 }) {
        case .success:
            return loop
        case .failure(let error):
            throw error
        case nil:
            preconditionFailure("the monitor thread signals readiness only after recording the result")
        }
    }

    /// Runs on the monitor thread: enters the namespace (this thread only), then opens and binds the socket.
    private static func openSocket(
        namespace: String?,
        receiveBufferSize: Int32
    ) throws(NetlinkPathMonitorError) -> Int32 {
        if let namespace {
            let namespaceFile = open(namespace, O_RDONLY | O_CLOEXEC)
            guard namespaceFile >= 0 else { throw .namespaceUnavailable(path: namespace, errno: errno) }
            defer { close(namespaceFile) }
            guard enterNetworkNamespace(namespaceFile) == 0 else {
                throw .namespaceSwitchFailed(path: namespace, errno: errno)
            }
        }
        let socketType = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let socket = Glibc.socket(AF_NETLINK, socketType, NETLINK_ROUTE)
        guard socket >= 0 else { throw .socketFailed(operation: "socket", errno: errno) }
        // A larger receive buffer makes overruns (and the re-dump they cost) rarer. Best effort: the forced
        // variant needs CAP_NET_ADMIN, the plain one is capped by net.core.rmem_max.
        var receiveBuffer = receiveBufferSize
        let optionSize = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(socket, SOL_SOCKET, SO_RCVBUFFORCE, &receiveBuffer, optionSize) != 0 {
            _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, optionSize)
        }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE
        )
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(socket)
            throw .socketFailed(operation: "bind", errno: error)
        }
        return socket
    }

    /// Runs on the monitor thread until stopped or failed.
    private func run(socket: Int32) {
        var tracker = RouteNetlinkTracker()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        do throws(NetlinkPathMonitorError) {
            try Self.send(tracker.resynchronize(), on: socket)
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: self.wakeup.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            while !self.delivery.isCancelled {
                guard poll(&descriptors, 2, -1) >= 0 else {
                    if errno == EINTR { continue }
                    throw .socketFailed(operation: "poll", errno: errno)
                }
                if descriptors[1].revents != 0 { return }
                if descriptors[0].revents != 0 {
                    try self.drain(socket: socket, buffer: &buffer, tracker: &tracker)
                }
            }
        } catch {
            self.failure.withLock { $0 = error }
            self.delivery.cancel()
        }
    }

    /// Reads every pending datagram, then sends the requests they led to: a dump request sent while the queue is
    /// still full after an overrun would be refused with `ENOBUFS`.
    private func drain(
        socket: Int32,
        buffer: inout [UInt8],
        tracker: inout RouteNetlinkTracker
    ) throws(NetlinkPathMonitorError) {
        var requests: [[UInt8]] = []
        while !self.delivery.isCancelled {
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
                    // The kernel dropped notifications: the model may be stale.
                    self.overrunCount.add(1, ordering: .relaxed)
                    requests += tracker.resynchronize()
                    continue
                default: throw .socketFailed(operation: "recv", errno: errno)
                }
            }
            // Only the kernel (port 0) speaks for the namespace; others could only be privileged senders.
            guard sender.nl_pid == 0 else { continue }
            if flags & Int32(MSG_TRUNC) != 0 {
                self.overrunCount.add(1, ordering: .relaxed)
                requests += tracker.resynchronize()
                continue
            }
            let step = tracker.receive(Array(buffer[0..<count]))
            if let refusal = step.refusal {
                throw .dumpRefused(errno: -refusal)
            }
            requests += step.requests
            if let snapshot = step.snapshot {
                self.delivery.update(snapshot)
            }
        }
    }

    private static func send(_ requests: [[UInt8]], on socket: Int32) throws(NetlinkPathMonitorError) {
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

/// `setns(fd, CLONE_NEWNET)`. Glibc declares `setns` only under `_GNU_SOURCE`, which Swift's Glibc module
/// does not define, so the symbol is looked up at run time (it is in every glibc since 2.14).
private func enterNetworkNamespace(_ descriptor: Int32) -> Int32 {
    typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
    let cloneNewNetwork: Int32 = 0x4000_0000
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else {
        errno = ENOSYS
        return -1
    }
    return unsafeBitCast(symbol, to: SetNamespace.self)(descriptor, cloneNewNetwork)
}
#endif
