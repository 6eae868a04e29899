#if os(Linux)
import Glibc

extension TCPConnection {
    /// Opens a TCP connection to the first of `addresses` that accepts, racing them by Happy Eyeballs v2
    /// (RFC 8305): the families alternate in the resolver's order, a next attempt starts `attemptDelay` after the
    /// previous one unless that one has connected (at once when one fails), the first to connect wins and the
    /// others are closed.
    ///
    /// The connects are non-blocking (`EINPROGRESS`, then writability and `SO_ERROR` on the loop); the socket is
    /// `O_NONBLOCK | O_CLOEXEC` with `TCP_NODELAY`. Cancelling the calling task abandons every attempt at once
    /// and closes their sockets.
    /// - Parameters:
    ///   - addresses: candidates in order of preference, typically from `Resolver.resolve`.
    ///   - timeout: one deadline for the whole call, across all addresses.
    ///   - attemptDelay: RFC 8305's Connection Attempt Delay, 250 ms by default, kept within 10 ms...2 s.
    ///   - loop: the loop that will drive the connection. Defaults to `EventLoop.shared`.
    ///   - namespace: if given, the sockets are created inside this network namespace.
    ///   - interface: if given, every socket is bound to the interface of this name (`SO_BINDTODEVICE`, in the
    ///     socket's namespace), so that the connection leaves by it whatever the routes prefer; nil (the default)
    ///     follows the route the kernel prefers when the connect starts.
    /// - Throws: the error of the address that failed last (`.refused`, `.unreachable`, ...), `.timedOut` when the
    ///   deadline passes, `.cancelled` when the task is cancelled, `.closed` when the loop is shut down;
    ///   `.system(operation: "connect", errno: EDESTADDRREQ)` for an empty address list.
    package static func connect(
        to addresses: [SocketAddress],
        timeout: Duration,
        attemptDelay: Duration = .milliseconds(250),
        loop: EventLoop = .shared,
        namespace: NetworkNamespace? = nil,
        interface: String? = nil
    ) async throws(SocketError) -> TCPConnection {
        let result = await self.race(
            to: addresses, timeout: timeout, attemptDelay: attemptDelay, loop: loop, namespace: namespace,
            interface: interface)
        do {
            return try result.get()
        } catch {
            throw error.error
        }
    }

    /// `connect(to:timeout:attemptDelay:loop:namespace:interface:)`, failing with every address tried and its
    /// error.
    /// - Parameter timeline: where each attempt's start and end (on `loop`'s clock) and outcome are noted as the
    ///   race runs; nil (the default) for none.
    package static func race(
        to addresses: [SocketAddress],
        timeout: Duration,
        attemptDelay: Duration = .milliseconds(250),
        loop: EventLoop = .shared,
        namespace: NetworkNamespace? = nil,
        interface: String? = nil,
        timeline: ConnectTimeline? = nil
    ) async -> Result<TCPConnection, ConnectRaceFailure> {
        guard !addresses.isEmpty else {
            return .failure(ConnectRaceFailure(error: .system(operation: "connect", errno: EDESTADDRREQ), attempts: []))
        }
        let ordered = HappyEyeballs.interleave(addresses, family: \.family)
        // Sockets for a namespace are made here, before the attempt, so the loop thread never
        // waits for a namespace thread.
        var sockets: [Int32]?
        if let namespace {
            var made: [Int32] = []
            for address in ordered {
                do {
                    let descriptor = try namespace.makeTCPSocket(family: address.protocolFamily)
                    loop.adopt(descriptor)
                    made.append(descriptor)
                } catch {
                    made.forEach(loop.release)
                    return .failure(ConnectRaceFailure(error: error, attempts: []))
                }
            }
            sockets = made
        }
        let race = ConnectRace(
            addresses: ordered,
            sockets: sockets,
            interface: interface,
            attemptDelay: ConnectRace.milliseconds(attemptDelay),
            deadline: loop.now + timeout,
            loop: loop,
            timeline: timeline
        )
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let accepted = loop.execute { race.start(continuation) }
                if !accepted {
                    sockets?.forEach(loop.release)
                    continuation.resume(returning: .failure(ConnectRaceFailure(error: .closed, attempts: [])))
                }
            }
        } onCancel: {
            loop.execute { race.cancel() }
        }
    }

    /// Resolves `host` (see `Resolver.resolve`) and connects to its addresses in order. Names are
    /// resolved in the process's own network namespace, even when `namespace` is given.
    package static func connect(
        host: String,
        port: Int,
        timeout: Duration,
        loop: EventLoop = .shared,
        namespace: NetworkNamespace? = nil
    ) async throws(SocketError) -> TCPConnection {
        let addresses = try await Resolver.resolve(host: host, port: port)
        return try await self.connect(to: addresses, timeout: timeout, loop: loop, namespace: namespace)
    }
}

#endif
