import Tether
import TetherCore

/// The client's side of the test server's delivery protocol (`Scenario.DeliveryProtocol` in `TetherTestServer`,
/// docs/delivery.md): the functions that read its acknowledgements and feed messages, and the messages a client
/// sends. Also a small example of what an app writes for its own protocol.
///
/// ```swift
/// configuration.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
/// configuration.delivery.feeds = TestServerDeliveryProtocol.feeds(["prices"])
/// try await client.send(TestServerDeliveryProtocol.send(id: "order-17", body: "buy 10"), id: "order-17")
/// ```
public enum TestServerDeliveryProtocol {
    /// Reads `ack ID`: acknowledges `ID`, not for the app; every other message is for the app.
    public static func acknowledgements(maximumWrites: Int? = 10) -> AcknowledgementOptions {
        AcknowledgementOptions(maximumWrites: maximumWrites) { message in
            guard case .text(let text) = message, text.utf8.starts(with: "ack ".utf8) else { return .none }
            return Acknowledgement(ids: [String(text.dropFirst(4))], forApp: false)
        }
    }

    /// Reads `feed STREAM N`; resumes each of `streams` with `subscribe STREAM AFTER` (or `subscribe STREAM` for a
    /// stream with nothing delivered yet) on every open.
    public static func feeds(_ streams: [String], limits: FeedLimits = FeedLimits()) -> FeedOptions {
        FeedOptions(limits: limits, resume: { positions in
            streams.map { stream in
                .text("subscribe \(stream)" + (positions[stream].map { " \($0)" } ?? ""))
            }
        }, read: self.feedPosition(in:))
    }

    /// The stream and number of a `feed STREAM N` message; nil for any other.
    public static func feedPosition(in message: WebSocketMessage) -> FeedPosition? {
        guard case .text(let text) = message, text.utf8.starts(with: "feed ".utf8) else { return nil }
        let fields = text.utf8.dropFirst(5).split(separator: UInt8(ascii: " "), maxSplits: 1)
        guard fields.count == 2, let sequence = UInt64(String(decoding: fields[1], as: UTF8.self)) else {
            return nil
        }
        return FeedPosition(stream: String(decoding: fields[0], as: UTF8.self), sequence: sequence)
    }

    /// The message of an acknowledged send: `send ID BODY` (an id without spaces).
    public static func send(id: String, body: String) -> WebSocketMessage {
        .text("send \(id) \(body)")
    }
}
