extension Scenario {
    /// The small acknowledging, resumable feed protocol the test server speaks for acknowledged sends and resumable
    /// feeds (docs/delivery.md, "The test server's protocol"). Text messages, fields split by one space:
    /// - client → server `send ID BODY`: an acknowledged message. The server's application takes `BODY` the first
    ///   time it sees `ID` (server-wide, across connections: `TestServer.deliveryRecord`) and answers `ack ID`; a
    ///   repeat of an id it took is answered `ack ID` again and not taken twice.
    /// - client → server `subscribe STREAM` or `subscribe STREAM AFTER`: send `STREAM` from now on; with `AFTER` (the
    ///   last number the client delivered), first every number after it that the server still retains. A number it
    ///   no longer retains is skipped: the client sees a gap.
    /// - server → client `feed STREAM N`: number `N` of `STREAM`. Every stream is server-wide, as `Broadcast` is:
    ///   number `N` (from 1) is published `N * intervalMilliseconds` after the server started, the same on every
    ///   connection, so that a client's old and new connections carry the same numbers.
    /// - server → client `ack ID`.
    ///
    /// Other messages are echoed when `echo` is on, and otherwise only recorded.
    public struct DeliveryProtocol: Sendable, Equatable {
        /// The streams the server publishes (names without spaces). Default `["feed"]`.
        public var streams: [String]
        /// Milliseconds between two numbers of a stream; at least 1.
        public var intervalMilliseconds: Int
        /// How many of each stream's latest numbers the server can send again after a resume; at least 0. Default
        /// 1,000.
        public var retained: Int
        /// Whether `send` messages are answered with `ack`. Default true; false takes them (de-duplicated) but never
        /// acknowledges, for a test of what a client writes again.
        public var acknowledges: Bool

        public init(
            streams: [String] = ["feed"], intervalMilliseconds: Int, retained: Int = 1_000, acknowledges: Bool = true
        ) {
            self.streams = streams
            self.intervalMilliseconds = intervalMilliseconds
            self.retained = retained
            self.acknowledges = acknowledges
        }

        /// A client's message in this protocol, read from its payload; nil for any other message.
        enum Command: Equatable {
            case send(id: String)
            case subscribe(stream: String, after: UInt64?)

            init?(_ payload: some Collection<UInt8>) {
                let fields = payload.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
                guard fields.count >= 2, !fields[1].isEmpty else { return nil }
                let word = String(decoding: fields[0], as: UTF8.self)
                let argument = String(decoding: fields[1], as: UTF8.self)
                switch word {
                case "send" where fields.count == 3:
                    self = .send(id: argument)
                case "subscribe" where fields.count == 2:
                    self = .subscribe(stream: argument, after: nil)
                case "subscribe" where fields.count == 3:
                    guard let after = UInt64(String(decoding: fields[2], as: UTF8.self)) else { return nil }
                    self = .subscribe(stream: argument, after: after)
                default:
                    return nil
                }
            }
        }

        /// The text of number `sequence` of `stream`: `feed STREAM N`.
        static func feedMessage(stream: String, sequence: UInt64) -> [UInt8] {
            Array("feed \(stream) \(sequence)".utf8)
        }
    }

    /// Speaks the delivery protocol (see `DeliveryProtocol`): acknowledges `send` messages and publishes `streams`,
    /// a number every `everyMilliseconds`, resumable after the last `retained`.
    public static func delivery(
        streams: [String] = ["feed"], everyMilliseconds: Int, retained: Int = 1_000
    ) -> Scenario {
        Scenario().speakingDeliveryProtocol(streams: streams, everyMilliseconds: everyMilliseconds, retained: retained)
    }

    /// This scenario, also speaking the delivery protocol (see `DeliveryProtocol`).
    public func speakingDeliveryProtocol(
        streams: [String] = ["feed"], everyMilliseconds: Int, retained: Int = 1_000, acknowledges: Bool = true
    ) -> Scenario {
        var copy = self
        copy.delivery = DeliveryProtocol(
            streams: streams, intervalMilliseconds: everyMilliseconds, retained: retained, acknowledges: acknowledges)
        return copy
    }
}
