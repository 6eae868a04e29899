#if os(Linux)
import Foundation
import TetherCore
@testable import Tether

/// A transport event in a form tests can compare.
enum Seen: Equatable, CustomStringConvertible {
    case opened(String?)
    case text(String)
    case binary(Data)
    case pong(UInt64)
    case pingFailed(UInt64)
    case ended(TransportEnd)

    init(_ event: TransportEvent) {
        switch event {
        case .opened(let subprotocol): self = .opened(subprotocol)
        case .message(.text(let text)): self = .text(text)
        case .message(.binary(let data)): self = .binary(data)
        case .pong(let id): self = .pong(id)
        case .pingFailed(let id): self = .pingFailed(id)
        case .ended(let end): self = .ended(end)
        }
    }

    var description: String {
        switch self {
        case .opened(let subprotocol): "opened(\(subprotocol ?? "nil"))"
        case .text(let text): "text(\(text.count > 40 ? "\(text.utf8.count) bytes" : text))"
        case .binary(let data): "binary(\(data.count) bytes)"
        case .pong(let id): "pong(\(id))"
        case .pingFailed(let id): "pingFailed(\(id))"
        case .ended(let end): "ended(\(end))"
        }
    }
}

/// The client side of a test: one transport connection and its events, read in order.
struct ClientProbe {
    let connection: any TransportConnection
    private var iterator: AsyncStream<TransportEvent>.AsyncIterator

    init(_ connection: any TransportConnection) {
        self.connection = connection
        self.iterator = connection.events.makeAsyncIterator()
    }

    /// Connects with `SocketTransport` to `url`, with the given request settings.
    init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        maximumMessageSize: Int = 16 << 20,
        // Long enough for a loaded machine: tests that exercise the connect timeout pass their own.
        connectTimeout: Int = 10_000,
        closeTimeout: Int = 2_000
    ) {
        let request = TransportRequest(
            url: url, headers: headers, subprotocols: subprotocols, maximumMessageSize: maximumMessageSize,
            connectTimeout: connectTimeout, closeTimeout: closeTimeout
        )
        self.init(SocketTransport().connect(request))
    }

    /// The next event, or nil once the stream has finished.
    mutating func next() async -> Seen? {
        await self.iterator.next().map(Seen.init)
    }

    /// Every remaining event until the stream finishes.
    mutating func rest() async -> [Seen] {
        var seen: [Seen] = []
        while let event = await self.next() { seen.append(event) }
        return seen
    }
}
#endif
