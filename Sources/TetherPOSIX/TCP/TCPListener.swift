#if os(Linux)
import Glibc
import Synchronization

/// A listening TCP socket whose accepted connections are driven by an `EventLoop`.
///
/// `bind` creates the socket and starts listening, so the port is known (and connections queue
/// in the kernel's backlog) before `start` begins accepting them.
///
/// Out of descriptors (`EMFILE`, `ENFILE`) or kernel memory, `accept` fails while the connection
/// stays in the backlog and the socket stays readable: instead of retrying in a busy loop, the
/// listener first lets its owner free a descriptor (`onDescriptorsExhausted`), and otherwise stops
/// watching the socket for `acceptBackoff` before trying again.
package final class TCPListener: Sendable, CustomStringConvertible {
    /// How long accepting pauses when `accept` fails for lack of descriptors or memory.
    package static let acceptBackoff = Duration.milliseconds(50)

    /// The loop that accepts and that drives every accepted connection.
    package let loop: EventLoop
    /// The bound address, with the port the kernel chose when bound to port 0.
    package let address: SocketAddress
    let descriptor: Int32
    /// Behind a lock rather than loop-bound so that `close` still works (closing the socket) when
    /// the loop has already shut down; uncontended in practice.
    private let state = Mutex(State())

    private struct State {
        var onAccept: (@Sendable (TCPConnection) -> Void)?
        var onDescriptorsExhausted: (@Sendable () -> Bool)?
        /// Tests: decides each accept attempt instead of the kernel (see `setAcceptGate`).
        var acceptGate: (@Sendable () -> Int32?)?
        /// The loop registration once accepting (loop thread).
        var registrationID: UInt64?
        /// Out of descriptors: the socket is out of epoll until the back-off timer fires.
        var paused = false
        var closed = false
    }

    /// The bound port.
    package var port: Int { self.address.port }

    package var description: String { "TCPListener(\(self.address))" }

    private init(descriptor: Int32, address: SocketAddress, loop: EventLoop) {
        self.descriptor = descriptor
        self.address = address
        self.loop = loop
    }

    deinit {
        // Reached only when never started or already closed (a started listener is retained by
        // its loop registration until `close`), so nothing is registered: just close the socket.
        if !self.state.withLock({ $0.closed }) { self.loop.release(self.descriptor) }
    }

    /// Creates a socket listening on `host`:`port`.
    /// - Parameters:
    ///   - host: a numeric IPv4 or IPv6 address. Defaults to `127.0.0.1` (loopback only, so tests
    ///     never expose a port); use `::1` for IPv6 loopback. An IPv6 listener is IPv6-only.
    ///   - port: 0 (the default) lets the kernel choose a free port; read it from `port`.
    ///   - backlog: how many completed connections the kernel queues before `start` accepts them.
    ///   - loop: the loop that accepts and drives the connections. Defaults to `EventLoop.shared`.
    ///   - namespace: if given, the socket is created inside this network namespace.
    /// - Throws: `.addressInUse`, `.nameResolution(code: EAI_NONAME)` for a host that is not a
    ///   numeric address, or another `SocketError`.
    package static func bind(
        host: String = "127.0.0.1",
        port: Int = 0,
        backlog: Int32 = 128,
        loop: EventLoop = .shared,
        namespace: NetworkNamespace? = nil
    ) throws(SocketError) -> TCPListener {
        guard let requested = SocketAddress(ip: host, port: port) else {
            throw (0...65535).contains(port) ? .nameResolution(code: EAI_NONAME) : .nameResolution(code: EAI_SERVICE)
        }
        let family = requested.protocolFamily
        let descriptor: Int32
        if let namespace {
            descriptor = try namespace.makeTCPSocket(family: family)
        } else {
            descriptor = try Socket.makeTCP(family: family)
        }
        loop.adopt(descriptor)
        do throws(SocketError) {
            try Socket.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if family == AF_INET6 {
                try Socket.setOption(descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1)
            }
            let bound = requested.withSockAddr { Glibc.bind(descriptor, $0, $1) }
            guard bound == 0 else { throw SocketError(operation: "bind", errno: errno) }
            guard listen(descriptor, backlog) == 0 else { throw SocketError(operation: "listen", errno: errno) }
            guard let address = Socket.address(of: descriptor, peer: false) else {
                throw SocketError(operation: "getsockname", errno: errno)
            }
            return TCPListener(descriptor: descriptor, address: address, loop: loop)
        } catch {
            loop.release(descriptor)
            throw error
        }
    }

    /// Starts accepting. `onAccept` runs on the loop thread with each new connection, which is
    /// connected, non-blocking, `TCP_NODELAY`, and not yet reading: install its handler there with
    /// `setHandler(_:)`. Calling `start` again, or after `close`, has no effect.
    /// - Parameter onDescriptorsExhausted: runs on the loop thread when `accept` fails with `EMFILE` or
    ///   `ENFILE`. Return `true` after closing a connection (one the server can best spare) to retry at
    ///   once; `false` (or nil, the default) pauses accepting for `acceptBackoff`. Meanwhile new
    ///   connections wait in the kernel's backlog.
    package func start(
        onAccept: @escaping @Sendable (TCPConnection) -> Void,
        onDescriptorsExhausted: (@Sendable () -> Bool)? = nil
    ) {
        let installed = self.state.withLock { state in
            guard !state.closed, state.onAccept == nil else { return false }
            state.onAccept = onAccept
            state.onDescriptorsExhausted = onDescriptorsExhausted
            return true
        }
        if installed { self.onLoop { $0.startAccepting() } }
    }

    /// For tests: `gate` runs on the loop thread before each accept attempt and returns an errno to
    /// fail that attempt with, the connection staying in the backlog as with a real `EMFILE`, or nil
    /// to accept. Lets a test run out of descriptors without lowering the whole process's limit.
    package func setAcceptGate(_ gate: (@Sendable () -> Int32?)?) {
        self.state.withLock { $0.acceptGate = gate }
    }

    /// Stops listening and closes the socket (on the loop; asynchronously when called elsewhere).
    /// Connections already accepted are not affected. Idempotent.
    /// - Parameter completion: called on the loop thread once the socket is closed.
    package func close(completion: (@Sendable () -> Void)? = nil) {
        self.onLoop { listener in
            listener.closeOnLoop()
            completion?()
        }
    }

    /// Closes the listener and returns once its socket is closed.
    package func close() async {
        await withCheckedContinuation { continuation in
            self.close { continuation.resume() }
        }
    }

    private func onLoop(_ body: @escaping @Sendable (TCPListener) -> Void) {
        if self.loop.inEventLoop {
            body(self)
        } else if !self.loop.execute({ [self] in body(self) }) {
            body(self)  // the loop is gone; its shutdown already closed the socket
        }
    }

    /// Closes the socket once. On the loop it also leaves epoll; off the loop (the loop has shut
    /// down) there is no registration left.
    private func closeOnLoop() {
        let registration: UInt64?? = self.state.withLock { state in
            guard !state.closed else { return .none }
            state.closed = true
            state.onAccept = nil
            defer { state.registrationID = nil }
            return .some(state.registrationID)
        }
        guard let registration else { return }
        if let id = registration, self.loop.inEventLoop { self.loop.deregister(self.descriptor, id: id) }
        self.loop.release(self.descriptor)
    }

    /// Loop thread only.
    private func startAccepting() {
        guard self.loop.inEventLoop else { return }  // the loop has shut down
        let shouldRegister = self.state.withLock { !$0.closed && $0.registrationID == nil }
        guard shouldRegister else { return }
        do {
            let id = try self.loop.register(self.descriptor, interest: .readable, owner: self)
            self.state.withLock { $0.registrationID = id }
        } catch {
            // Only possible when the loop is shutting down or out of memory; the listener stops.
            self.closeOnLoop()
        }
    }

    /// Loop thread: stops watching the socket (it stays registered, so a loop shutdown still closes
    /// it) and watches it again after `acceptBackoff`.
    private func pauseAccepting() {
        let id: UInt64? = self.state.withLock { state in
            guard !state.closed, !state.paused, let id = state.registrationID else { return nil }
            state.paused = true
            return id
        }
        guard let id else { return }
        try? self.loop.watch(self.descriptor, id: id, interest: [], previous: .readable)
        self.loop.schedule(after: Self.acceptBackoff) { [self] in self.resumeAccepting() }
    }

    /// Loop thread: the back-off is over.
    private func resumeAccepting() {
        let id: UInt64? = self.state.withLock { state in
            guard !state.closed, state.paused, let id = state.registrationID else { return nil }
            state.paused = false
            return id
        }
        guard let id else { return }
        do {
            try self.loop.watch(self.descriptor, id: id, interest: .readable, previous: [])
        } catch {
            self.closeOnLoop()  // out of kernel memory for epoll: the listener stops
        }
    }

    /// Accepts one connection, or returns -1 with `errno` set.
    private func acceptOne(gate: (@Sendable () -> Int32?)?) -> Int32 {
        if let gate, let error = gate() {
            errno = error
            return -1
        }
        if let accept4 = GNUExtensions.accept4 {
            let descriptor = accept4(
                self.descriptor, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            )
            if descriptor >= 0 { self.loop.adopt(descriptor) }
            return descriptor
        }
        let descriptor = accept(self.descriptor, nil, nil)
        if descriptor >= 0 {
            self.loop.adopt(descriptor)
            do { try Socket.setNonBlockingAndCloseOnExec(descriptor) } catch {
                self.loop.release(descriptor)
                errno = ECONNABORTED
                return -1
            }
        }
        return descriptor
    }
}

extension TCPListener: LoopSelectable {
    func ready(_ readiness: Readiness) {
        // A bounded batch per turn keeps the loop fair; level-triggered epoll reports the rest.
        for _ in 0..<64 {
            let callbacks = self.state.withLock { state in
                state.closed || state.paused ? nil : (state.onAccept, state.onDescriptorsExhausted, state.acceptGate)
            }
            guard case let (onAccept?, onDescriptorsExhausted, gate)? = callbacks else { return }
            let descriptor = self.acceptOne(gate: gate)
            if descriptor < 0 {
                let error = errno
                switch error {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO, EPERM:
                    continue
                case EMFILE, ENFILE:
                    // The pending connection stays in the backlog and the socket readable: retrying at
                    // once would spin. Retry now only if the owner closed a connection to make room.
                    if onDescriptorsExhausted?() == true { continue }
                    self.pauseAccepting()
                    return
                default:
                    // Out of memory (ENOBUFS, ENOMEM) or another failure: back off as well.
                    self.pauseAccepting()
                    return
                }
            }
            _ = try? Socket.setNoDelay(descriptor)
            onAccept(TCPConnection(descriptor: descriptor, loop: self.loop))
        }
    }

    func loopShuttingDown() {
        self.closeOnLoop()
    }
}
#endif
