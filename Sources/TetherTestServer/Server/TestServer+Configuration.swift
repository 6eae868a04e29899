#if os(Linux)
import TetherPOSIX
import TetherWire

extension TestServer {
    /// Where a `TestServer` listens, what it serves, and the bounds it keeps whatever clients do. Every setting has
    /// a default; change the ones a test is about.
    public struct Configuration: Sendable {
        /// A numeric address: loopback `127.0.0.1` (default) or `::1` (or, for the package's real-link tests, an
        /// address of `namespace`).
        public var host: String
        /// 0 (default) for an ephemeral port chosen by the kernel; read it from `TestServer.port`.
        public var port: Int
        /// The largest frame and message accepted from a client (default 16 MiB); larger ones close the connection
        /// with 1009. At least 125 (a control frame's payload).
        public var maximumMessageSize: Int
        /// Each list of a `ConnectionRecord` (messages, pings and pongs either way) keeps at most its first this many
        /// entries (default 1,000) and counts the rest (`RecordList.total`), so that a flood or a long benchmark does
        /// not grow memory. 0 keeps counts only.
        public var recordLimit: Int
        /// The records of at most this many ended connections are kept (default 100), those that ended last; older
        /// ones are dropped and counted in `droppedConnectionCount`. Live connections are always kept.
        public var endedConnectionLimit: Int
        /// A connection whose upgrade request is not complete this long after it was accepted is closed, recorded as
        /// `.handshakeTimedOut` (default 10 s). A request left unanswered on purpose
        /// (`Scenario.Handshake.ignore`) is not affected.
        public var handshakeTimeout: Duration
        /// At most this many connections may be waiting for their upgrade request at once (default 128): a newly
        /// accepted one resets the oldest of them (recorded as `.handshakeDropped`), so that sockets that never send
        /// a request cannot crowd clients out. Raise it for benchmarks that connect in bursts.
        public var maximumHandshakingConnections: Int
        /// While more than `high` bytes wait for a client (echoes, pongs, streamed messages), the server stops
        /// reading that connection until they are down to `low` (default 1 MiB and 256 KiB).
        public var outboundWatermarks: Watermarks
        /// Serve `wss://` with this certificate chain and key; nil (default) for `ws://`. A client whose TLS
        /// handshake fails is recorded as `.tlsFailed`.
        public var tls: TestServerTLS?
        /// The ids of acknowledged sends the delivery protocol remembers, to take each once
        /// (`Scenario.DeliveryProtocol`, `TestServer.deliveryRecord`): the latest this many (default 100,000); a repeat
        /// of an older one would be taken again (counted in `DeliveryRecord.forgotten`). At least 0.
        public var deliveryIDLimit = 100_000

        /// The loop to run on, for the package's own tests and tools; nil (default) starts one for the server
        /// and stops it in `stop()`.
        package var loop: EventLoop?
        /// The clock of the loop started when `loop` is nil (a given loop has its own): a manual one makes the
        /// scenario's times and the handshake timeout move only when a test advances it. Default the real one.
        package var clock: EventLoopClock = .continuous
        /// A network namespace to listen in (needs root); `host` is then an address of it. Nil (default): the
        /// process's own. Real-link tests put the server behind a link they can break.
        package var namespace: NetworkNamespace?

        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            maximumMessageSize: Int = 16 << 20,
            recordLimit: Int = 1_000,
            endedConnectionLimit: Int = 100,
            handshakeTimeout: Duration = .seconds(10),
            maximumHandshakingConnections: Int = 128,
            outboundWatermarks: Watermarks = .standard,
            tls: TestServerTLS? = nil
        ) {
            self.host = host
            self.port = port
            self.maximumMessageSize = maximumMessageSize
            self.recordLimit = recordLimit
            self.endedConnectionLimit = endedConnectionLimit
            self.handshakeTimeout = handshakeTimeout
            self.maximumHandshakingConnections = maximumHandshakingConnections
            self.outboundWatermarks = outboundWatermarks
            self.tls = tls
        }

        /// Names the first setting out of range.
        func validate() throws(TestServerError) {
            // Control frames carry up to 125 bytes: a smaller limit would refuse every ping and close.
            guard self.maximumMessageSize >= 125 else { throw .invalidArgument("maximumMessageSize (at least 125)") }
            guard self.recordLimit >= 0 else { throw .invalidArgument("recordLimit (at least 0)") }
            guard self.endedConnectionLimit >= 0 else { throw .invalidArgument("endedConnectionLimit (at least 0)") }
            guard self.handshakeTimeout > .zero else { throw .invalidArgument("handshakeTimeout (more than 0)") }
            guard self.maximumHandshakingConnections >= 1 else {
                throw .invalidArgument("maximumHandshakingConnections (at least 1)")
            }
            guard self.deliveryIDLimit >= 0 else { throw .invalidArgument("deliveryIDLimit (at least 0)") }
            guard self.outboundWatermarks.isValid else {
                throw .invalidArgument("outboundWatermarks (1 <= high, 0 <= low <= high)")
            }
        }
    }
}
#endif
