#if os(Linux)
import Glibc

extension TCPConnection {
    /// Opens a TCP connection to the first of `addresses` that accepts, trying them in order.
    ///
    /// The connect is non-blocking (`EINPROGRESS`, then writability and `SO_ERROR` on the loop);
    /// the socket is `O_NONBLOCK | O_CLOEXEC` with `TCP_NODELAY`. Cancelling the calling task
    /// abandons the attempt at once and closes its socket.
    /// - Parameters:
    ///   - addresses: candidates in order of preference, typically from `Resolver.resolve`.
    ///   - timeout: one deadline for the whole call, across all addresses.
    ///   - loop: the loop that will drive the connection. Defaults to `EventLoop.shared`.
    ///   - namespace: if given, the sockets are created inside this network namespace.
    /// - Throws: the last address's error (`.refused`, `.unreachable`, ...), `.timedOut` when the
    ///   deadline passes, `.cancelled` when the task is cancelled, `.closed` when the loop is shut
    ///   down; `.system(operation: "connect", errno: EDESTADDRREQ)` for an empty address list.
    public static func connect(
        to addresses: [SocketAddress],
        timeout: Duration,
        loop: EventLoop = .shared,
        namespace: NetworkNamespace? = nil
    ) async throws(SocketError) -> TCPConnection {
        guard !addresses.isEmpty else { throw .system(operation: "connect", errno: EDESTADDRREQ) }
        // Sockets for a namespace are made here, before the attempt, so the loop thread never
        // waits for a namespace thread.
        var sockets: [Int32]?
        if let namespace {
            var made: [Int32] = []
            for address in addresses {
                do {
                    let descriptor = try namespace.makeTCPSocket(family: address.protocolFamily)
                    loop.adopt(descriptor)
                    made.append(descriptor)
                } catch {
                    made.forEach(loop.release)
                    throw error
                }
            }
            sockets = made
        }
        let attempt = ConnectAttempt(
            addresses: addresses,
            sockets: sockets,
            deadline: loop.now + timeout,
            loop: loop
        )
        let result: Result<TCPConnection, SocketError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let accepted = loop.execute { attempt.start(continuation) }
                if !accepted {
                    sockets?.forEach(loop.release)
                    continuation.resume(returning: .failure(.closed))
                }
            }
        } onCancel: {
            loop.execute { attempt.cancel() }
        }
        return try result.get()
    }

    /// Resolves `host` (see `Resolver.resolve`) and connects to its addresses in order. Names are
    /// resolved in the process's own network namespace, even when `namespace` is given.
    public static func connect(
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

/// One `connect` call: tries the addresses in order on the loop until one connects, all fail,
/// the deadline passes, or the task is cancelled. The continuation is resumed exactly once.
private final class ConnectAttempt: Sendable {
    private let loop: EventLoop
    private let deadline: ContinuousClock.Instant
    private let state: LoopBound<State>

    typealias Continuation = CheckedContinuation<Result<TCPConnection, SocketError>, Never>

    /// Loop thread only.
    private final class State {
        let addresses: [SocketAddress]
        /// Pre-made sockets (one per address) when connecting inside a namespace.
        var sockets: [Int32]?
        var next = 0
        var continuation: Continuation?
        var cancelledBeforeStart = false
        var finished = false
        var current: (descriptor: Int32, registrationID: UInt64)?
        var deadlineTimer: TimerHandle?
        var lastError: SocketError?

        init(addresses: [SocketAddress], sockets: [Int32]?) {
            self.addresses = addresses
            self.sockets = sockets
        }
    }

    init(addresses: [SocketAddress], sockets: [Int32]?, deadline: ContinuousClock.Instant, loop: EventLoop) {
        self.loop = loop
        self.deadline = deadline
        self.state = LoopBound(State(addresses: addresses, sockets: sockets), loop: loop)
    }

    func start(_ continuation: Continuation) {
        let state = self.state.value
        state.continuation = continuation
        if state.cancelledBeforeStart {
            self.finish(.failure(.cancelled))
            return
        }
        state.deadlineTimer = self.loop.schedule(at: self.deadline) { [self] in
            self.finish(.failure(.timedOut))
        }
        self.tryNextAddress()
    }

    func cancel() {
        let state = self.state.value
        if state.continuation == nil {
            state.cancelledBeforeStart = true
        } else {
            self.finish(.failure(.cancelled))
        }
    }

    private func tryNextAddress() {
        let state = self.state.value
        while !state.finished, state.next < state.addresses.count {
            let index = state.next
            state.next += 1
            let address = state.addresses[index]
            let descriptor: Int32
            do {
                if let sockets = state.sockets {
                    descriptor = sockets[index]
                    state.sockets![index] = -1
                } else {
                    descriptor = try Socket.makeTCP(family: address.protocolFamily)
                    self.loop.adopt(descriptor)
                }
            } catch {
                state.lastError = error
                continue
            }
            do {
                try Socket.setNoDelay(descriptor)
            } catch {
                self.loop.release(descriptor)
                state.lastError = error
                continue
            }
            let result = address.withSockAddr { Glibc.connect(descriptor, $0, $1) }
            if result == 0 {
                self.finish(.success(descriptor))
                return
            }
            let code = errno
            guard code == EINPROGRESS || code == EINTR else {
                self.loop.release(descriptor)
                state.lastError = SocketError(operation: "connect", errno: code)
                continue
            }
            do {
                let id = try self.loop.register(descriptor, interest: .writable, owner: self)
                state.current = (descriptor, id)
                return
            } catch {
                self.loop.release(descriptor)
                state.lastError = error
            }
        }
        if !state.finished {
            self.finish(.failure(state.lastError ?? .unreachable))
        }
    }

    /// Resumes the caller once, closing every socket that is not handed over.
    private func finish(_ outcome: Result<Int32, SocketError>) {
        let state = self.state.value
        guard !state.finished else { return }
        state.finished = true
        state.deadlineTimer?.cancel()
        if let current = state.current {
            self.loop.deregister(current.descriptor, id: current.registrationID)
            state.current = nil
            if case .failure = outcome { self.loop.release(current.descriptor) }
        }
        state.sockets?.filter { $0 >= 0 }.forEach(self.loop.release)
        state.sockets = nil
        let continuation = state.continuation
        state.continuation = nil
        switch outcome {
        case .success(let descriptor):
            continuation?.resume(returning: .success(TCPConnection(descriptor: descriptor, loop: self.loop)))
        case .failure(let error):
            continuation?.resume(returning: .failure(error))
        }
    }
}

extension ConnectAttempt: LoopSelectable {
    func ready(_ readiness: Readiness) {
        let state = self.state.value
        guard let current = state.current else { return }
        let code = Socket.pendingError(current.descriptor)
        if code == 0 {
            self.finish(.success(current.descriptor))
            return
        }
        self.loop.deregister(current.descriptor, id: current.registrationID)
        self.loop.release(current.descriptor)
        state.current = nil
        state.lastError = SocketError(operation: "connect", errno: code)
        self.tryNextAddress()
    }

    func loopShuttingDown() {
        self.finish(.failure(.closed))
    }
}
#endif
