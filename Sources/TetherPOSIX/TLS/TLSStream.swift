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
package final class TLSStream: ByteStream, TCPConnectionHandler, @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the only state that is not Sendable is `unguardedEngine` (the TLS session
    // and the write side), and it is touched only through `engine(_:)`, which holds `lock` for the whole access;
    // `session` is handed over with `sending` and no other reference to it remains. The read side is a
    // `LoopBound`, which checks its thread on every access; the other properties are immutable and Sendable.
    package let loop: EventLoop
    /// The connection carrying the records.
    package let tcp: TCPConnection
    private let lock = Mutex(())
    /// The TLS engine and the write side, shared by writing threads and the loop: only inside `engine(_:)`.
    private let unguardedEngine: Engine
    /// The read side, on the loop thread only.
    private let loopState: LoopBound<TLSLoopState>

    /// Whether `tcp` already has a handler, which this stream replaces (TLS inside a proxy's tunnel).
    private let takesOverHandler: Bool

    /// Wraps `tcp`; `session` is a fresh client or server session.
    /// - Parameter takingOver: `tcp` already has a handler (which read a proxy's CONNECT answer) that this stream
    ///   replaces; otherwise `tcp` has none yet.
    package init(tcp: TCPConnection, session: sending TLSSession, takingOver: Bool = false) {
        self.loop = tcp.loop
        self.tcp = tcp
        self.takesOverHandler = takingOver
        self.unguardedEngine = Engine(session: session)
        self.loopState = LoopBound(TLSLoopState(), loop: tcp.loop)
    }

    /// Runs `body` with the engine, under the lock.
    private func engine<Result>(_ body: (Engine) -> Result) -> Result {
        self.lock.withLock { _ in body(self.unguardedEngine) }
    }

    /// Whether the handshake has completed (for tests and diagnostics).
    package var isHandshakeComplete: Bool { self.engine { $0.handshakeComplete } }

    /// Whether the handshake resumed an earlier session (see `TLSSession.isResumed`); false until it completed.
    package var isResumed: Bool { self.engine { $0.handshakeComplete && $0.session.isResumed } }

    /// The peer's certificate subject (see `TLSSession.peerCertificateSubject`); nil until the handshake completed.
    package var peerCertificateSubject: String? {
        self.engine { $0.handshakeComplete ? $0.session.peerCertificateSubject : nil }
    }

    /// Calls `body` on the loop thread once the handshake has completed, with whether it resumed a session (see
    /// `isResumed`), before any plaintext reaches the handler. Loop thread, before `setStreamHandler`.
    package func whenHandshakeCompletes(_ body: @escaping (_ resumed: Bool) -> Void) {
        precondition(self.loop.inEventLoop, "TLSStream.whenHandshakeCompletes must be called on the loop thread")
        self.loopState.value.handshakeObserver = body
    }

    // MARK: - ByteStream

    package func setStreamHandler(_ handler: any ByteStreamHandler) {
        precondition(self.loop.inEventLoop, "TLSStream.setStreamHandler must be called on the loop thread")
        let state = self.loopState.value
        precondition(state.handler == nil && !state.delivered, "TLSStream.setStreamHandler called twice")
        state.handler = handler
        if self.takesOverHandler {
            self.tcp.replaceHandler(self)
        } else {
            self.tcp.setHandler(self)
        }
        self.process()  // a client's first flight; nothing reaches the handler before the handshake completes
    }

    /// Encrypts `bytes` into records on the calling thread and hands them to the TCP connection (see `ByteStream`):
    /// the records are what waits, so `array` is not needed. Before the handshake completed, a copy waits for it.
    package func startWrite(
        _ bytes: UnsafeRawBufferPointer, array: [UInt8]?, sealing: Bool, delivery: WriteDelivery
    ) -> StartedSend {
        let outcome = self.engine { engine in
            engine.write(bytes, sealing: sealing, tcp: self.tcp, delivery: delivery)
        }
        switch outcome {
        case .sent(let started):
            return started
        case .waiting(let waiter):
            return waiter.map(StartedSend.waiting) ?? .done
        case .refused:
            return delivery.failed(.closed, on: self.loop)
        case .broken:
            let started = delivery.failed(.closed, on: self.loop)
            self.tcp.reset()
            return started
        }
    }

    package var queuedWriteBytes: Int {
        self.engine { $0.earlyBytes } + self.tcp.queuedWriteBytes
    }

    /// The TCP connection's queue decides: plaintext waiting for the handshake is only what was written before it
    /// (a protocol's opening request), which the handshake's completion moves into that queue.
    package func whenQueuedWrites(atMost limit: Int, _ body: @escaping @Sendable () -> Void) {
        self.tcp.whenQueuedWrites(atMost: limit, body)
    }

    package func pauseReading() {
        self.loop.runOnLoop { [self] in
            self.loopState.value.paused = true
            self.tcp.pauseReading()
        }
    }

    package func resumeReading() {
        self.loop.runOnLoop { [self] in
            let state = self.loopState.value
            guard state.paused else { return }
            state.paused = false
            self.tcp.resumeReading()
            // Records already received (and a TCP end behind them) are not announced by the socket again.
            self.loop.execute { self.processThenEndIfDrained() }
        }
    }

    package func close() {
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
        self.loop.runOnLoop { [self] in self.loopState.value.stopped = true }
        self.tcp.close()
    }

    package func reset() {
        let early = self.engine { engine in
            engine.accepting = false
            return engine.takeEarly()
        }
        self.fail(early)
        self.loop.runOnLoop { [self] in self.loopState.value.stopped = true }
        self.tcp.reset()
    }

    // MARK: - TCPConnectionHandler

    package func received(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        self.engine { $0.session.receive(bytes) }
        self.process()
    }

    package func ended(_ end: TCPConnection.End, on connection: TCPConnection) {
        self.loopState.value.tcpEnd = end
        self.processThenEndIfDrained()
    }

    // MARK: - Reading

    /// Decrypts and delivers plaintext until more ciphertext is needed, reading is paused or stopped, or TLS fails
    /// (then the alert goes out and TCP closes; its end reports the failure).
    private func process() {
        let state = self.loopState.value
        // The loop's read buffer is free here: TCP has handed over its bytes (copied into the engine) before this
        // runs, and reads into it again only after this returns.
        let buffer = self.loop.readBuffer
        while let handler = state.handler, !state.paused, !state.stopped {
            let step = self.engine { $0.step(into: buffer, tcp: self.tcp) }
            if let observer = state.handshakeObserver, let resumed = self.engine({
                $0.handshakeComplete ? $0.session.isResumed : nil
            }) {
                state.handshakeObserver = nil
                observer(resumed)
            }
            switch step {
            case .plaintext(let count):
                handler.received(UnsafeRawBufferPointer(rebasing: buffer[..<count]), on: self)
            case .needMore:
                return
            case .failed(let early):
                state.stopped = true
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
        let state = self.loopState.value
        guard let tcpEnd = state.tcpEnd, !state.delivered, let handler = state.handler else { return }
        let (drained, end, early) = self.engine { engine in
            (engine.session.bufferedCiphertext == 0 || state.stopped || engine.failure != nil,
             engine.end(after: tcpEnd), engine.takeEarly())
        }
        // Paused with records still undecrypted: the end waits for `resumeReading`.
        guard drained || !state.paused else { return }
        state.delivered = true
        state.handler = nil
        self.fail(early)
        handler.ended(end, on: self)
    }

    // MARK: - Helpers

    private func fail(_ completions: [TCPConnection.WriteCompletion]) {
        for completion in completions {
            self.loop.completeLater(completion, with: .failure(.closed))
        }
    }
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

/// The stream's loop state: the read side, on the loop thread.
private final class TLSLoopState {
    var handler: (any ByteStreamHandler)?
    var paused = false
    /// `close()` or `reset()` was called, or TLS failed: no more plaintext is delivered.
    var stopped = false
    /// How TCP ended, once it has.
    var tcpEnd: TCPConnection.End?
    /// The end was reported to the handler.
    var delivered = false
    /// Told once when the handshake completes (`whenHandshakeCompletes`).
    var handshakeObserver: ((_ resumed: Bool) -> Void)?
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
        _ bytes: UnsafeRawBufferPointer, sealing: Bool, tcp: TCPConnection, delivery: WriteDelivery
    ) -> WriteOutcome {
        guard self.accepting else { return .refused }
        if sealing { self.accepting = false }
        guard self.handshakeComplete else {
            let (completion, waiter) = delivery.completionForWaiting()
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
        return .sent(records.withUnsafeBytes { raw in
            tcp.startWrite(raw, array: records, sealing: false, delivery: delivery)
        })
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
            // Everything received is delivered: stop here, as TCP stops on a short read, instead of a read that only
            // says it needs more (one per delivered record otherwise).
            guard self.session.hasInput else { return .needMore }
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
