#if os(Linux)
import Foundation
import TetherCore
@testable import Tether

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
            connectTimeout: .milliseconds(connectTimeout), closeTimeout: .milliseconds(closeTimeout)
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
