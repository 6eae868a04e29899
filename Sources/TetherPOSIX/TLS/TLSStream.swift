#if os(Linux)
import Synchronization

/// TLS over a `TCPConnection`, as a `ByteStream`: the same contract as the TCP connection, with plaintext in and
/// out, driven by the connection's event loop (no thread of its own, no blocking).
///
/// - Writing encrypts on the caller's thread under the stream's lock and hands the records to the TCP connection
///   under that same lock, so that records reach the wire in the order they were made. Plaintext written before
///   the handshake completed waits (copied) and is encrypted when it does.
/// - Flow control: nothing is buffered here once the handshake is done. The records go straight into the TCP
///   connection's write queue, so `queuedWriteBytes` (and the outbound watermarks that read it) counts them, plus
///   any plaintext still waiting for the handshake. Reading decrypts one record at a time and stops as soon as the
///   handler pauses reading; TCP reads stop with it, so what waits undecrypted is at most the last TCP read.
/// - Ending: `close()` sends `close_notify` after the queued records, then FIN. The peer's end of stream without
///   its `close_notify` ends the stream with `.tlsFailed(.truncated)`; a handshake or record failure sends its
///   alert, closes TCP, and ends with `.tlsFailed` once the descriptor is closed.
public final class TLSStream: ByteStream, TCPConnectionHandler, @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the only state that is not Sendable is `unguardedEngine` (the TLS session
    // and the write side), and it is touched only through `engine(_:)`, which holds `lock` for the whole access;
    // `session` is handed over with `sending` and no other reference to it remains. The read side is a
    // `LoopBound`, which checks its thread on every access; the other properties are immutable and Sendable.
    public let loop: EventLoop
    /// The connection carrying the records.
    public let tcp: TCPConnection
    private let lock = Mutex(())
    /// The TLS engine and the write side, shared by writing threads and the loop: only inside `engine(_:)`.
    private let unguardedEngine: Engine
    /// The read side, on the loop thread only.
    private let reader: LoopBound<Reader>

    /// Whether `tcp` already has a handler, which this stream replaces (TLS inside a proxy's tunnel).
    private let takesOverHandler: Bool

    /// Wraps `tcp`; `session` is a fresh client or server session.
    /// - Parameter takingOver: `tcp` already has a handler (which read a proxy's CONNECT answer) that this stream
    ///   replaces; otherwise `tcp` has none yet.
    public init(tcp: TCPConnection, session: sending TLSSession, takingOver: Bool = false) {
        self.loop = tcp.loop
        self.tcp = tcp
        self.takesOverHandler = takingOver
        self.unguardedEngine = Engine(session: session)
        self.reader = LoopBound(Reader(), loop: tcp.loop)
    }

    /// Runs `body` with the engine, under the lock.
    private func engine<Result>(_ body: (Engine) -> Result) -> Result {
        self.lock.withLock { _ in body(self.unguardedEngine) }
    }

    /// Whether the handshake has completed (for tests and diagnostics).
    public var isHandshakeComplete: Bool { self.engine { $0.handshakeComplete } }

    /// Whether the handshake resumed an earlier session (see `TLSSession.isResumed`); false until it completed.
    public var isResumed: Bool { self.engine { $0.handshakeComplete && $0.session.isResumed } }

    /// The peer's certificate subject (see `TLSSession.peerCertificateSubject`); nil until the handshake completed.
    public var peerCertificateSubject: String? {
        self.engine { $0.handshakeComplete ? $0.session.peerCertificateSubject : nil }
    }

    // MARK: - ByteStream

    public func setStreamHandler(_ handler: any ByteStreamHandler) {
        precondition(self.loop.inEventLoop, "TLSStream.setStreamHandler must be called on the loop thread")
        let reader = self.reader.value
        precondition(reader.handler == nil && !reader.delivered, "TLSStream.setStreamHandler called twice")
        reader.handler = handler
        if self.takesOverHandler {
            self.tcp.replaceHandler(self)
        } else {
            self.tcp.setHandler(self)
        }
        self.process()  // a client's first flight; nothing reaches the handler before the handshake completes
    }

    public func write(
        borrowing bytes: UnsafeRawBufferPointer, sealing: Bool, completion: TCPConnection.WriteCompletion?
    ) {
        let outcome = self.engine { engine in
            engine.write(bytes, sealing: sealing, tcp: self.tcp, delivery: .completion(completion))
        }
        self.settle(outcome, completion: completion)
    }

    /// Encrypts `bytes` into records like `write(borrowing:sealing:completion:)`: the records are what waits.
    public func write(_ bytes: [UInt8], sealing: Bool, completion: TCPConnection.WriteCompletion?) {
        bytes.withUnsafeBytes { self.write(borrowing: $0, sealing: sealing, completion: completion) }
    }

    public func write(_ bytes: [UInt8], onFailure: @escaping @Sendable (SocketError) -> Void) {
        let outcome = bytes.withUnsafeBytes { raw in
            self.engine { engine in
                engine.write(raw, sealing: false, tcp: self.tcp, delivery: .failuresOnly(onFailure))
            }
        }
        self.settle(outcome) { result in
            if case .failure(let error) = result { onFailure(error) }
        }
    }

    public func send(_ bytes: [UInt8], sealing: Bool) async throws(SocketError) {
        let outcome = bytes.withUnsafeBytes { raw in
            self.engine { engine in
                engine.write(raw, sealing: sealing, tcp: self.tcp, delivery: .awaited)
            }
        }
        switch outcome {
        case .sent(let started):
            try await started.finish()
        case .waiting(let waiter):
            try await waiter?.result().get()
        case .refused:
            throw .closed
        case .broken:
            self.tcp.reset()
            throw .closed
        }
    }

    public var queuedWriteBytes: Int {
        self.engine { $0.earlyBytes } + self.tcp.queuedWriteBytes
    }

    /// The TCP connection's queue decides: plaintext waiting for the handshake is only what was written before it
    /// (a protocol's opening request), which the handshake's completion moves into that queue.
    public func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void) {
        self.tcp.whenQueuedWrites(atMost: limit, body)
    }

    public func pauseReading() {
        self.onLoop { stream in
            stream.reader.value.paused = true
            stream.tcp.pauseReading()
        }
    }

    public func resumeReading() {
        self.onLoop { stream in
            let reader = stream.reader.value
            guard reader.paused else { return }
            reader.paused = false
            stream.tcp.resumeReading()
            // Records already received (and a TCP end behind them) are not announced by the socket again.
            stream.loop.execute { stream.processThenEndIfDrained() }
        }
    }

    public func close() {
        let early = self.engine { engine in
            engine.accepting = false
            if engine.handshakeComplete, engine.failure == nil, !engine.closeNotifySent {
                engine.closeNotifySent = true
                engine.session.shutdown()
                engine.flush(to: self.tcp)
            }
            return engine.takeEarly()
        }
        self.fail(early)
        self.onLoop { $0.reader.value.stopped = true }
        self.tcp.close()
    }

    public func reset() {
        let early = self.engine { engine in
            engine.accepting = false
            return engine.takeEarly()
        }
        self.fail(early)
        self.onLoop { $0.reader.value.stopped = true }
        self.tcp.reset()
    }

    // MARK: - TCPConnectionHandler

    public func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        self.engine { $0.session.receive(bytes) }
        self.process()
    }

    public func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.reader.value.tcpEnd = end
        self.processThenEndIfDrained()
    }

    // MARK: - Reading

    /// Decrypts and delivers plaintext until more ciphertext is needed, reading is paused or stopped, or TLS fails
    /// (then the alert goes out and TCP closes; its end reports the failure).
    private func process() {
        let reader = self.reader.value
        // The loop's read buffer is free here: TCP has handed over its bytes (copied into the engine) before this
        // runs, and reads into it again only after this returns.
        let buffer = self.loop.readBuffer
        while let handler = reader.handler, !reader.paused, !reader.stopped {
            let step = self.engine { $0.step(into: buffer, tcp: self.tcp) }
            switch step {
            case .plaintext(let count):
                handler.received(UnsafeRawBufferPointer(rebasing: buffer[..<count]), on: self)
            case .needMore:
                return
            case .failed(let early):
                reader.stopped = true
                self.fail(early)
                self.tcp.close()  // flushes the alert
                return
            }
        }
    }

    /// Processes what was received; once TCP has ended and nothing more can come out of the engine (or reading was
    /// stopped), reports the end.
    private func processThenEndIfDrained() {
        self.process()
        let reader = self.reader.value
        guard let tcpEnd = reader.tcpEnd, !reader.delivered, let handler = reader.handler else { return }
        let (drained, end, early) = self.engine { engine in
            (engine.session.bufferedCiphertext == 0 || reader.stopped || engine.failure != nil,
             engine.end(after: tcpEnd), engine.takeEarly())
        }
        // Paused with records still undecrypted: the end waits for `resumeReading`.
        guard drained || !reader.paused else { return }
        reader.delivered = true
        reader.handler = nil
        self.fail(early)
        handler.ended(end, on: self)
    }

    // MARK: - Helpers

    private func settle(_ outcome: WriteOutcome, completion: TCPConnection.WriteCompletion?) {
        switch outcome {
        case .sent, .waiting:
            break
        case .refused:
            self.completeLater(completion, with: .failure(.closed))
        case .broken:
            self.completeLater(completion, with: .failure(.closed))
            self.tcp.reset()
        }
    }

    private func fail(_ completions: [TCPConnection.WriteCompletion]) {
        for completion in completions {
            self.completeLater(completion, with: .failure(.closed))
        }
    }

    private func completeLater(_ completion: TCPConnection.WriteCompletion?, with result: Result<Void, SocketError>) {
        guard let completion else { return }
        if !self.loop.execute({ completion(result) }) { completion(result) }
    }

    private func onLoop(_ body: @escaping @Sendable (TLSStream) -> Void) {
        if self.loop.inEventLoop {
            body(self)
        } else {
            self.loop.execute { [self] in body(self) }
        }
    }
}

/// How a write's outcome is reported.
private enum Delivery {
    /// By this completion (success or failure), if any.
    case completion(TCPConnection.WriteCompletion?)
    /// Failures only, so that a write the kernel takes at once costs no loop turn.
    case failuresOnly(@Sendable (SocketError) -> Void)
    /// By the `StartedSend` (or the waiter) returned, which an async `send` awaits.
    case awaited
}

/// What a write did under the lock.
private enum WriteOutcome {
    /// Encrypted and handed to TCP.
    case sent(StartedSend)
    /// Waiting (copied) for the handshake; the waiter for an awaited write.
    case waiting(WriteWaiter?)
    /// Writes are no longer accepted.
    case refused
    /// The TLS session failed to encrypt: the stream is broken.
    case broken
}

/// What one step of reading produced.
private enum ReadStep {
    case plaintext(Int)
    case needMore
    /// TLS failed; these early writes now fail.
    case failed([TCPConnection.WriteCompletion])
}

/// The read side's state, on the loop thread.
private final class Reader {
    var handler: (any ByteStreamHandler)?
    var paused = false
    /// `close()` or `reset()` was called, or TLS failed: no more plaintext is delivered.
    var stopped = false
    /// How TCP ended, once it has.
    var tcpEnd: TCPConnection.End?
    /// The end was reported to the handler.
    var delivered = false
}

/// The TLS engine and the write side, behind `TLSStream`'s lock.
private final class Engine {
    let session: TLSSession
    var handshakeComplete = false
    /// New writes are taken. Cleared by a sealing write, `close()`, `reset()`, a failure and the end.
    var accepting = true
    var closeNotifySent = false
    /// The first TLS failure.
    var failure: TLSFailure?
    /// Plaintext written before the handshake completed, in order.
    var early: [(bytes: [UInt8], completion: TCPConnection.WriteCompletion?)] = []
    var earlyBytes = 0

    init(session: TLSSession) {
        self.session = session
    }

    /// Encrypts `bytes` and hands the records to `tcp`, or keeps them for after the handshake.
    func write(
        _ bytes: UnsafeRawBufferPointer, sealing: Bool, tcp: TCPConnection, delivery: Delivery
    ) -> WriteOutcome {
        guard self.accepting else { return .refused }
        if sealing { self.accepting = false }
        guard self.handshakeComplete else {
            var waiter: WriteWaiter?
            let completion: TCPConnection.WriteCompletion?
            switch delivery {
            case .completion(let given):
                completion = given
            case .failuresOnly(let onFailure):
                completion = { result in
                    if case .failure(let error) = result { onFailure(error) }
                }
            case .awaited:
                let created = WriteWaiter()
                waiter = created
                completion = { created.finish($0) }
            }
            self.early.append((Array(bytes), completion))
            self.earlyBytes += bytes.count
            return .waiting(waiter)
        }
        do {
            try self.session.write(bytes)
        } catch {
            self.failure = self.failure ?? error
            self.accepting = false
            return .broken
        }
        let records = self.session.takeCiphertext()
        // TLS seals itself (above): the TCP connection stays open for the close_notify that `close()` sends.
        switch delivery {
        case .completion(let completion):
            tcp.write(records, sealing: false, completion: completion)
            return .sent(.done)
        case .failuresOnly(let onFailure):
            tcp.write(records, onFailure: onFailure)
            return .sent(.done)
        case .awaited:
            return .sent(tcp.beginSend(records, sealing: false))
        }
    }

    /// One step of the handshake or of reading; writes what the engine produced (handshake flights, alerts).
    func step(into buffer: UnsafeMutableRawBufferPointer, tcp: TCPConnection) -> ReadStep {
        guard self.failure == nil else { return .failed(self.takeEarly()) }
        do throws(TLSFailure) {
            if !self.handshakeComplete {
                let done = try self.session.handshake()
                self.flush(to: tcp)
                guard done else { return .needMore }
                self.handshakeComplete = true
                try self.flushEarly(to: tcp)
            }
            let result = try self.session.read(into: buffer)
            self.flush(to: tcp)
            switch result {
            case .bytes(let count): return .plaintext(count)
            case .needMore, .closed: return .needMore
            }
        } catch {
            self.failure = error
            self.accepting = false
            self.flush(to: tcp)  // the alert, if any
            return .failed(self.takeEarly())
        }
    }

    /// How the stream ended, given how TCP did.
    func end(after tcpEnd: TCPConnection.End) -> ByteStreamEnd {
        if let failure = self.failure { return .tlsFailed(failure) }
        switch tcpEnd {
        case .endOfStream:
            guard self.handshakeComplete else {
                return .tlsFailed(.handshakeFailed("the connection closed during the handshake"))
            }
            return self.session.receivedCloseNotify ? .endOfStream : .tlsFailed(.truncated)
        case .closedLocally:
            return .closedLocally
        case .failed(let error):
            return .failed(error)
        }
    }

    /// Hands the records the engine produced to `tcp`.
    func flush(to tcp: TCPConnection) {
        let records = self.session.takeCiphertext()
        if !records.isEmpty { tcp.write(records, sealing: false, completion: nil) }
    }

    /// Encrypts the plaintext written before the handshake completed, in order. On a failure, the writes not
    /// encrypted stay in `early` (for the caller to fail).
    private func flushEarly(to tcp: TCPConnection) throws(TLSFailure) {
        while !self.early.isEmpty {
            let (bytes, completion) = self.early[0]
            let session = self.session
            let encrypted = bytes.withUnsafeBytes { raw in
                Result { () throws(TLSFailure) in try session.write(raw) }
            }
            try encrypted.get()
            self.early.removeFirst()
            self.earlyBytes -= bytes.count
            tcp.write(self.session.takeCiphertext(), sealing: false, completion: completion)
        }
    }

    /// Removes the early writes, whose completions the caller fails.
    func takeEarly() -> [TCPConnection.WriteCompletion] {
        let completions = self.early.compactMap(\.completion)
        self.early.removeAll()
        self.earlyBytes = 0
        return completions
    }
}
#endif
