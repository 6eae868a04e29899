#if os(Linux)
import Foundation
import Glibc
import Synchronization
import TetherPOSIX
import Tether
import TetherWire

/// The peer of the ping-flood scenario: a WebSocket server on loopback made of plain sockets, since the embedded test
/// server always reads. It accepts one connection and answers the upgrade with a valid 101 (`accept`), then writes
/// pings as fast as the socket takes them and reads nothing (`flood`) until its writes have made no progress for a
/// stall window: the client has stopped reading. Only then, to count what the client produced, it reads the pongs
/// (`drain`) and answers the client's close frame (`answerClose`).
///
/// Each step runs on a thread of its own, started by the step and awaited by the scenario, and is bounded in count and
/// time, so no thread outlives the scenario; `close()` waits for a step in progress and closes what is still open.
final class PingFloodPeer: Sendable {
    /// Every ping carries the largest control payload: its number (8 bytes, big-endian, from 1), then padding.
    static let payloadSize = 125
    /// A ping from the server: a 2-byte header, unmasked.
    static let pingFrameSize = 2 + payloadSize
    /// A pong from the client: a 2-byte header and a 4-byte masking key.
    static let pongFrameSize = 2 + 4 + payloadSize
    /// Pings encoded per write: about 64 KiB.
    private static let batchPings = 512

    /// What `flood` did.
    struct Flood: Sendable {
        /// Bytes of pings written; the last ping may be cut (`drain` writes its rest).
        var bytes = 0
        /// The writes made no progress for the stall window: the client stopped reading.
        var stalled = false
        /// Why the flood ended without a stall or writing all its pings (a socket error), or nil.
        var failure: String?
        /// The time bound ended the flood before all its pings were written and without a stall: the client kept
        /// reading for all of it (a loaded machine writes fewer pings in the bound, not a different flood).
        var timeBoundReached = false
        var milliseconds = 0
        /// When the last byte was written, in ms since the flood started.
        var lastWriteMilliseconds = 0
        /// At the stall, the kernel's counters of the peer's socket and of the client's (found among the process's
        /// descriptors); nil if they could not be read.
        var peer: TCPCounters?
        var client: TCPCounters?
        /// The client's counters when the flood began: it had written its upgrade request (and, as some kernels count
        /// `tcpi_bytes_acked` on the connecting side, its SYN), so what it wrote during the flood is the difference.
        var clientBefore: TCPCounters?

        /// Complete pings written.
        var pings: Int { self.bytes / PingFloodPeer.pingFrameSize }
        /// The number of the last ping, the cut one included.
        var lastPing: Int { (self.bytes + PingFloodPeer.pingFrameSize - 1) / PingFloodPeer.pingFrameSize }
    }

    /// What `drain` read.
    struct Drain: Sendable {
        /// Pongs answering the pings the client had read before the stall: everything it had produced by then.
        var pongsBeforeStall = 0
        /// Every pong read.
        var pongs = 0
        /// The number of the latest ping answered.
        var latestAnswered = 0
        /// Frames that were not pongs to our pings (none are expected).
        var otherFrames = 0
        var failure: String?
        var milliseconds = 0
    }

    /// What `answerClose` saw.
    struct Closing: Sendable {
        /// The client's close code (nil: none, or no close frame).
        var code: UInt16?
        var receivedClose = false
        /// Our close frame went out.
        var answered = false
        /// The client then ended the TCP connection with a FIN.
        var endOfStream = false
        var failure: String?
    }

    private struct State {
        var listener: Int32
        var connection: Int32 = -1
        /// The client's port, once accepted.
        var clientPort = 0
        /// The client's frames, read after the flood.
        var webSocket = WebSocketConnection(.init(role: .server, automaticPongs: false))
        /// The rest of the ping the kernel cut when the flood stopped.
        var unwritten: [UInt8] = []
    }

    let port: Int
    private let state: Mutex<State>
    /// The sizes of the client's upgrade request and of our 101, once accepted: the bytes on the connection that are
    /// neither pings nor pongs.
    private let handshakeBytes = Mutex<(request: Int, response: Int)>((0, 0))

    /// The size of the client's upgrade request (bytes) and of the 101 that answered it.
    var handshake: (request: Int, response: Int) { self.handshakeBytes.withLock { $0 } }

    init() throws(CheckFailure) {
        let listener: (descriptor: Int32, port: Int)
        do throws(SocketError) {
            listener = try BlockingLoopbackListener.open()
        } catch {
            throw .setup("ping-flood peer: listening on loopback: \(error)")
        }
        self.port = listener.port
        self.state = Mutex(State(listener: listener.descriptor))
    }

    var url: String { "ws://127.0.0.1:\(self.port)/ping-flood" }

    /// Closes the sockets still open, after the step in progress (if any) has ended. Idempotent.
    func close() {
        self.state.withLock { state in
            if state.listener >= 0 { Glibc.close(state.listener) }
            if state.connection >= 0 { Glibc.close(state.connection) }
            state.listener = -1
            state.connection = -1
        }
    }

    // MARK: Steps

    /// Accepts the client's connection (then stops listening, so a reconnect is refused) and answers its upgrade
    /// request with a 101 whose `Sec-WebSocket-Accept` TetherWire computes from the key.
    /// - Returns: nil, or why there is no open WebSocket.
    func accept(within limit: Duration) async -> String? {
        await Self.onThread { [self] in
            self.state.withLock { state in
                let accepted = Self.accept(&state, deadline: Deadline(limit))
                if case .success(let request, let response) = accepted {
                    self.handshakeBytes.withLock { $0 = (request, response) }
                }
                return accepted.failure
            }
        }
    }

    /// Writes pings as fast as the socket takes them, reading nothing, until the client has stopped reading,
    /// `maxPings` were written, or `limit` passed.
    ///
    /// The client has stopped reading when no byte could be written for `stallWindow` while more than `queuedAbove`
    /// bytes of its pongs are not yet in its kernel: as many pongs as the pings it read (its kernel's count), less
    /// what its kernel took (an estimate above the truth by the pongs it coalesced; `drain` counts them). A window
    /// without progress while the client's queue is small is a client that is only slow (a busy machine): the flood
    /// goes on.
    func flood(maxPings: Int, stallWindow: Duration, queuedAbove: Int, within limit: Duration) async -> Flood {
        await Self.onThread { [self] in
            self.state.withLock { state in
                Self.flood(
                    &state, peerPort: self.port, response: self.handshake.response, maxPings: maxPings,
                    stallWindow: stallWindow, queuedAbove: queuedAbove, limit: limit)
            }
        }
    }

    /// Writes the rest of the cut ping, then reads pongs until one answers ping `lastPing` (the client answers the
    /// latest ping it read, at least), or `limit` passed. Pongs answering pings up to `readBeforeStall` are counted
    /// apart: only pings the client had read can have been answered before the stall, and after it the client
    /// answers newer ones.
    func drain(readBeforeStall: Int, lastPing: Int, within limit: Duration) async -> Drain {
        await Self.onThread { [self] in
            self.state.withLock { state in
                Self.drain(&state, readBeforeStall: readBeforeStall, lastPing: lastPing, deadline: Deadline(limit))
            }
        }
    }

    /// Reads until the client's close frame, answers it, and waits for the end of the TCP stream; then closes the
    /// socket. Bounded by `limit`.
    func answerClose(within limit: Duration) async -> Closing {
        await Self.onThread { [self] in
            self.state.withLock { state in
                let closing = Self.answerClose(&state, deadline: Deadline(limit))
                if state.connection >= 0 { Glibc.close(state.connection) }
                state.connection = -1
                return closing
            }
        }
    }

    /// Runs `body` on a new thread (it blocks in `poll`) and returns its result.
    private static func onThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "tether-check-peer"
            thread.start()
        }
    }

    // MARK: Step bodies (on the step's thread, under the state's lock)

    /// The sizes of the request and of the 101, or why there is no WebSocket.
    private enum Accepted {
        case success(request: Int, response: Int)
        case failure(String)

        var failure: String? {
            guard case .failure(let reason) = self else { return nil }
            return reason
        }
    }

    private static func accept(_ state: inout State, deadline: Deadline) -> Accepted {
        var waiting = pollfd(fd: state.listener, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, deadline.milliseconds) > 0 else { return .failure("no connection in time") }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let connection = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(state.listener, $0, &length) }
        }
        Glibc.close(state.listener)
        state.listener = -1
        guard connection >= 0 else { return .failure("accept: errno \(errno)") }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)  // the test suite starts child processes
        // A small send buffer of our own (the kernel doubles it, and no longer grows it): fewer pings wait in it when
        // the client stops reading, so reading them all afterwards is quick. The client's buffers are untouched.
        var sendBuffer: Int32 = 64 << 10
        setsockopt(connection, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        state.connection = connection
        state.clientPort = Int(UInt16(bigEndian: address.sin_port))
        var parser = HandshakeRequestParser()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var received = 0
        while true {
            var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&readable, 1, deadline.milliseconds) > 0 else { return .failure("no upgrade request in time") }
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return .failure("the client closed before its upgrade request") }
            received += count
            parser.append(buffer[..<count])
            let request: HandshakeRequest?
            do {
                request = try parser.parse()
            } catch {
                return .failure("invalid upgrade request: \(error)")
            }
            guard let request else { continue }
            // The client sends nothing before the 101, so nothing follows its request.
            guard request.remaining.isEmpty else { return .failure("bytes after the upgrade request") }
            let response = ServerHandshake.accept(request)
            let sent = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == response.count else { return .failure("the 101 could not be written") }
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
            return .success(request: received, response: response.count)
        }
    }

    private static func flood(
        _ state: inout State, peerPort: Int, response: Int, maxPings: Int, stallWindow: Duration, queuedAbove: Int,
        limit: Duration
    ) -> Flood {
        let start = ContinuousClock.now
        let deadline = Deadline(limit)
        let window = Deadline.milliseconds(of: stallWindow)
        var flood = Flood()
        guard state.connection >= 0 else {
            flood.failure = "no connection"
            return flood
        }
        var encoder = WebSocketEncoder(role: .server)
        var payload = [UInt8](repeating: UInt8(ascii: "."), count: Self.payloadSize)
        var batch: [UInt8] = []
        batch.reserveCapacity(Self.batchPings * Self.pingFrameSize)
        var offset = 0
        var nextPing = 1
        // The client's socket, found once: it stays open while the flood runs.
        let clientDescriptor = TCPCounters.descriptor(localPort: state.clientPort, remotePort: peerPort)
        flood.clientBefore = clientDescriptor.flatMap(TCPCounters.of)
        /// The pongs the client has not handed to its kernel, at most (nil: its counters cannot be read).
        func clientQueue(_ client: TCPCounters) -> Int? {
            guard let before = flood.clientBefore else { return nil }
            let pingsRead = (client.read - response) / Self.pingFrameSize
            return pingsRead * Self.pongFrameSize - (client.written - before.written)
        }
        while true {
            if offset == batch.count {
                guard nextPing <= maxPings else {
                    // The client kept up with the whole flood: its counters now tell what it still owes.
                    flood.peer = TCPCounters.of(state.connection)
                    flood.client = clientDescriptor.flatMap(TCPCounters.of)
                    break
                }
                batch.removeAll(keepingCapacity: true)
                offset = 0
                for _ in 0..<min(Self.batchPings, maxPings - nextPing + 1) {
                    withUnsafeBytes(of: UInt64(nextPing).bigEndian) { number in
                        payload.replaceSubrange(0..<8, with: number)
                    }
                    // A 125-byte payload is always a valid ping.
                    try? encoder.ping(payload, into: &batch)
                    nextPing += 1
                }
            }
            let count = batch.withUnsafeBytes { bytes in
                send(state.connection, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                flood.bytes += count
                flood.lastWriteMilliseconds = start.duration(to: .now).milliseconds
                continue
            }
            let code = errno
            if count < 0, code == EINTR { continue }
            guard count < 0, code == EAGAIN || code == EWOULDBLOCK else {
                flood.failure = "send: errno \(code)"
                break
            }
            let remaining = deadline.milliseconds
            guard remaining > 0 else {
                if start.duration(to: .now).milliseconds - flood.lastWriteMilliseconds < window {
                    // The client kept reading until the bound (the peer wrote within the last window): as when it
                    // keeps up with the whole flood, its counters now tell what it still owes.
                    flood.timeBoundReached = true
                    flood.peer = TCPCounters.of(state.connection)
                    flood.client = clientDescriptor.flatMap(TCPCounters.of)
                } else {
                    flood.failure = "no stall within the time bound"
                }
                break
            }
            var writable = pollfd(fd: state.connection, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&writable, 1, min(window, remaining))
            guard ready == 0, window <= remaining else { continue }
            let client = clientDescriptor.flatMap(TCPCounters.of)
            // Without the client's counters there is no telling a stall from a slow client: take the window alone.
            if let client, let queued = clientQueue(client), queued <= queuedAbove { continue }
            flood.stalled = true
            flood.peer = TCPCounters.of(state.connection)
            flood.client = client
            break
        }
        let cut = flood.bytes % Self.pingFrameSize
        if cut > 0 {
            state.unwritten = Array(batch[offset..<(offset + Self.pingFrameSize - cut)])
        }
        flood.milliseconds = start.duration(to: .now).milliseconds
        return flood
    }

    private static func drain(
        _ state: inout State, readBeforeStall: Int, lastPing: Int, deadline: Deadline
    ) -> Drain {
        let start = ContinuousClock.now
        var drain = Drain()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while drain.latestAnswered < lastPing, drain.failure == nil {
            let remaining = deadline.milliseconds
            guard remaining > 0 else {
                drain.failure = "no pong for ping \(lastPing) in time (latest answered: \(drain.latestAnswered))"
                break
            }
            let events = POLLIN | (state.unwritten.isEmpty ? 0 : POLLOUT)
            var ready = pollfd(fd: state.connection, events: Int16(events), revents: 0)
            guard poll(&ready, 1, remaining) > 0 else { continue }
            if !state.unwritten.isEmpty, ready.revents & Int16(POLLOUT) != 0 {
                let count = state.unwritten.withUnsafeBytes {
                    send(state.connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if count > 0 { state.unwritten.removeFirst(count) }
            }
            guard ready.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(state.connection, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EAGAIN || errno == EINTR { continue }
            guard count > 0 else {
                drain.failure = count == 0 ? "the client ended the connection" : "recv: errno \(errno)"
                break
            }
            state.webSocket.bytesReceived(buffer[..<count])
            var unused: [UInt8] = []
            for event in Self.run(&state.webSocket, writing: &unused) {
                switch event {
                case .pong(let number):
                    drain.pongs += 1
                    if number <= readBeforeStall { drain.pongsBeforeStall += 1 }
                    drain.latestAnswered = max(drain.latestAnswered, number)
                case .other:
                    drain.otherFrames += 1
                case .closed(let description):
                    drain.failure = "the client closed: \(description)"
                }
            }
        }
        drain.milliseconds = start.duration(to: .now).milliseconds
        return drain
    }

    private static func answerClose(_ state: inout State, deadline: Deadline) -> Closing {
        var closing = Closing()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while closing.failure == nil, !closing.endOfStream {
            let remaining = deadline.milliseconds
            guard remaining > 0 else {
                closing.failure = closing.receivedClose ? "no end of stream in time" : "no close frame in time"
                break
            }
            var ready = pollfd(fd: state.connection, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, remaining) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(state.connection, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EAGAIN || errno == EINTR { continue }
            if count == 0 {
                closing.endOfStream = true
                if !closing.receivedClose { closing.failure = "the client ended the stream without a close frame" }
                break
            }
            guard count > 0 else {
                closing.failure = errno == ECONNRESET ? "the client reset the connection" : "recv: errno \(errno)"
                break
            }
            state.webSocket.bytesReceived(buffer[..<count])
            // The engine writes the echo of the client's close code.
            var output: [UInt8] = []
            for event in Self.run(&state.webSocket, writing: &output) {
                guard case .closed(let closure) = event else { continue }
                closing.receivedClose = true
                if case .byPeer(let code, _) = closure { closing.code = code }
            }
            guard closing.receivedClose, !closing.answered else { continue }
            closing.answered = Self.writeAll(output, to: state.connection, deadline: deadline)
            if !closing.answered { closing.failure = "our close frame could not be written" }
        }
        return closing
    }

    // MARK: Helpers

    private enum Frame {
        case pong(Int)
        case other
        case closed(WebSocketClosure)
    }

    /// Runs the engine's actions until it needs more bytes: what it delivers, as frames (a pong to one of our pings
    /// with its number), and what it writes, appended to `output`. Its stream actions (this peer closes the socket
    /// itself) are not needed.
    private static func run(
        _ webSocket: inout WebSocketConnection, writing output: inout [UInt8]
    ) -> [Frame] {
        var frames: [Frame] = []
        while webSocket.nextAction(queuedWriteBytes: 0, { action in
            switch action {
            case .deliver(let message):
                guard message.opcode == .pong, message.payload.count == Self.payloadSize else {
                    return frames.append(.other)
                }
                frames.append(.pong(Int(UInt64(bigEndian: message.payload.loadUnaligned(as: UInt64.self)))))
            case .closed(let closure):
                frames.append(.closed(closure))
            case .write(.borrowed(let bytes), _):
                output.append(contentsOf: bytes)
            case .write(.owned(let bytes), _):
                output.append(contentsOf: bytes)
            case .pongReceived, .pongSent, .pauseReading, .resumeReading, .awaitWriteRoom, .armCloseTimer,
                 .closeStream, .resetStream, .ended:
                break
            }
        }) {}
        return frames
    }

    /// Writes all of `bytes` to the non-blocking `descriptor`, waiting for room until `deadline`.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, deadline: Deadline) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                offset += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EINTR else { return false }
            var writable = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            guard deadline.milliseconds > 0, poll(&writable, 1, deadline.milliseconds) >= 0 else { return false }
        }
        return true
    }
}

/// A point in time for `poll`'s timeouts.
private struct Deadline {
    let instant: ContinuousClock.Instant

    init(_ limit: Duration) {
        self.instant = .now + limit
    }

    /// Milliseconds left, rounded up; 0 once passed.
    var milliseconds: Int32 { Self.milliseconds(of: ContinuousClock.now.duration(to: self.instant)) }

    static func milliseconds(of duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
#endif
