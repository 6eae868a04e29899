#if os(Linux)
import Foundation
import TetherCore
import TetherPOSIX
import TetherWire

/// One connection made by `SocketTransport`.
///
/// Thread confinement: every piece of protocol state (phase, handshake parser, frame decoder, outstanding
/// pings, timers, the TCP connection) lives in a `SocketConnectionCore` wrapped in a `LoopBound` of the
/// connection's event loop, and is touched only on that loop's single thread. The TCP callbacks and timers run
/// there by construction; `send`, `sendPing` and `close` hop there with `EventLoop.execute`, which runs work in
/// call order, so calls from one task keep their order. `LoopBound` checks the thread on every access, so a
/// mistake traps instead of racing. Only the encoding of an outgoing data message (masking included) happens
/// on the caller's thread, which keeps large payloads' CPU work off the shared loop.
final class SocketConnection: TransportConnection {
    let events: AsyncStream<TransportEvent>
    private let loop: EventLoop
    private let core: LoopBound<SocketConnectionCore>
    /// The largest message `send` accepts (the request's `maximumMessageSize`).
    private let sendLimit: Int

    init(request: TransportRequest, loop: EventLoop, namespace: NetworkNamespace? = nil) {
        let (events, sink) = AsyncStream.makeStream(of: TransportEvent.self, bufferingPolicy: .unbounded)
        self.events = events
        self.loop = loop
        self.sendLimit = request.maximumMessageSize
        let core = SocketConnectionCore(request: request, sink: sink, loop: loop, namespace: namespace)
        self.core = LoopBound(core, loop: loop)
        switch SocketEndpoint.make(for: request) {
        case .success(let endpoint):
            let core = self.core
            if !loop.execute({ core.value.start(endpoint, bound: core) }) {
                sink.yield(.ended(.connectFailed(.system(ECANCELED))))  // the loop has shut down (tests only)
                sink.finish()
            }
        case .failure:
            // Nothing was started, so the core stays idle: `send` throws `.notOpen`, `close` does nothing.
            sink.yield(.ended(.connectFailed(.unsupported)))
            sink.finish()
        }
    }

    deinit {
        // Dropped without `close`: close as "going away" so the socket is not left open. No effect once ended.
        let core = self.core
        self.loop.execute { core.value.close(code: 1001, reason: "") }
    }

    nonisolated(nonsending) func send(_ message: WebSocketMessage) async throws {
        var encoder = WebSocketEncoder(role: .client, random: MaskingEntropy())
        var frame: [UInt8] = []
        switch message {
        case .text(let text):
            let size = text.utf8.count
            guard size <= self.sendLimit else {
                throw WebSocketSendError.messageTooLarge(size: size, limit: self.sendLimit)
            }
            frame.reserveCapacity(size + FrameSize.maximumClientHeader)
            encoder.text(text, into: &frame)
        case .binary(let data):
            guard data.count <= self.sendLimit else {
                throw WebSocketSendError.messageTooLarge(size: data.count, limit: self.sendLimit)
            }
            frame.reserveCapacity(data.count + FrameSize.maximumClientHeader)
            data.withUnsafeBytes { encoder.encode(.binary, payload: $0, into: &frame) }
        }
        let encoded = frame
        let core = self.core
        let failure: WebSocketSendError? = await withCheckedContinuation { continuation in
            let accepted = self.loop.execute { core.value.send(encoded, continuation: continuation) }
            if !accepted { continuation.resume(returning: .notOpen) }
        }
        if let failure { throw failure }
    }

    func sendPing(id: UInt64) {
        let core = self.core
        self.loop.execute { core.value.sendPing(id: id) }
    }

    func close(code: UInt16, reason: String) {
        let core = self.core
        self.loop.execute { core.value.close(code: code, reason: reason) }
    }

    /// Runs after an earlier `close` on the loop (`execute` keeps call order), so it sees that close's frame.
    func waitUntilCloseSent() async {
        let core = self.core
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !self.loop.execute({ core.value.waitUntilCloseSent(continuation) }) {
                continuation.resume()  // the loop has shut down: nothing is pending any more
            }
        }
    }
}

enum FrameSize {
    /// 2 bytes of header, 8 of extended length, 4 of masking key.
    static let maximumClientHeader = 14
}
#endif
