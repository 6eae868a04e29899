#if os(Linux)
import CTetherLinux
import Dispatch
import TetherPOSIX

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
    private let delivery = PathSnapshotDelivery()
    private let reader: RouteNetlinkReader

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
        let groups = UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE
        )
        do {
            self.reader = try RouteNetlinkReader.launch(
                namespace: namespace, groups: groups, receiveBufferSize: receiveBufferSize,
                handler: PathTrackingHandler(delivery: self.delivery)
            )
        } catch {
            throw NetlinkPathMonitorError(error)
        }
    }

    public func start(_ handler: @escaping @Sendable (PathSnapshot) -> Void) {
        self.delivery.start(handler)
    }

    public func cancel() {
        self.delivery.cancel()
        self.reader.stop()
    }

    /// Why the monitor thread stopped watching on its own (the monitor then delivers nothing more);
    /// `nil` while it watches and after a plain `cancel()`.
    public var failure: NetlinkPathMonitorError? {
        self.reader.failure.map(NetlinkPathMonitorError.init)
    }

    /// How many times the kernel reported lost notifications and the monitor dumped everything again.
    var overrunCount: Int { self.reader.overrunCount }

    /// Signalled when the monitor thread has closed its socket and ended (for tests).
    var threadEnded: DispatchSemaphore { self.reader.threadEnded }

    deinit {
        self.cancel()
    }
}

extension NetlinkPathMonitorError {
    init(_ error: NetlinkReaderError) {
        switch error {
        case .namespaceUnavailable(let path, let errno): self = .namespaceUnavailable(path: path, errno: errno)
        case .namespaceSwitchFailed(let path, let errno): self = .namespaceSwitchFailed(path: path, errno: errno)
        case .socketFailed(let operation, let errno): self = .socketFailed(operation: operation, errno: errno)
        case .dumpRefused(let errno): self = .dumpRefused(errno: errno)
        }
    }
}

/// The monitor's side of the reader's thread: the kernel's datagrams through the tracker, snapshots to delivery.
private struct PathTrackingHandler: RouteNetlinkHandler {
    var tracker = RouteNetlinkTracker()
    let delivery: PathSnapshotDelivery

    mutating func resynchronize() -> [[UInt8]] {
        self.tracker.resynchronize()
    }

    mutating func receive(_ datagram: [UInt8]) throws(NetlinkReaderError) -> [[UInt8]] {
        guard !self.delivery.isCancelled else { return [] }
        let step = self.tracker.receive(datagram)
        if let refusal = step.refusal {
            throw .dumpRefused(errno: -refusal)
        }
        if let snapshot = step.snapshot {
            self.delivery.update(snapshot)
        }
        return step.requests
    }

    mutating func stopped(by error: NetlinkReaderError) {
        self.delivery.cancel()
    }
}
#endif
