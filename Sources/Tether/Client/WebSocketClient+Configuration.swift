import Foundation
import TetherCore
import TetherWire
#if os(Linux)
import TetherPOSIX
#endif

extension WebSocketClient {
    /// The client's configuration; the same type for every clock.
    public typealias Configuration = WebSocketConfiguration
}

/// Everything a client needs to know before it starts. All durations are monotonic.
///
/// The session's timing and policies (heartbeat, timeouts, backoff, retry policy, lifecycle, outbox bounds, ...) are
/// one unit, `session` (a `SessionConfiguration`), declared and checked once there; each of them reads and writes as
/// a property of this configuration too, so `configuration.heartbeatInterval = .seconds(15)` and
/// `configuration.backoff.base = .seconds(2)` set the session's. The rest (the URL, the handshake, TLS, proxies,
/// buffers, the transport) is the client's and its transport's.
@dynamicMemberLookup
public struct WebSocketConfiguration: Sendable {
    /// The `ws://` or `wss://` URL to connect to. Its query and user info never appear in logs or events. With a
    /// `requestProvider`, the URL of each attempt is the provider's.
    public var url: URL
    /// Extra HTTP headers for the opening handshake (for example `Authorization`). Their values are never logged.
    /// With a `requestProvider`, the headers of each attempt are the provider's.
    public var headers: [(name: String, value: String)]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference. The one the server chose is
    /// `ConnectionState.handshake?.subprotocol` while open.
    public var subprotocols: [String]
    /// The session's timing and policies, one unit: heartbeat (`heartbeatInterval`, `heartbeatTimeout`), deadlines
    /// (`connectTimeout`, `probeTimeout`, `closeTimeout`), reconnection (`stablePeriod`, `backoff`,
    /// `retryLaterDelay`, `maximumRetryAfter`, `retryPolicy`), `lifecycle`, `interfaceSwitch`, `outboxLimits`, and
    /// what is recorded (`recordsMessages`, `recordsHeartbeats`). Each is documented, defaulted and checked once,
    /// in `SessionConfiguration`, and reads and writes as a property of this configuration as well.
    public var session: SessionConfiguration
    /// The largest message, in bytes, either way: accepted from the server (a larger one closes the connection with
    /// 1009; a compressed one is bounded as inflated), and sent (`send` throws `.messageTooLarge` for a larger one,
    /// whatever the policy and the state). Default 16 MiB.
    public var maximumMessageSize: Int
    /// How much received data may wait for the consumer of `events`: once the events not read yet weigh more than
    /// `high` bytes (each message its payload plus the event's own size in the buffer, 72 bytes on 64-bit platforms;
    /// every other event that size), the client stops reading the socket, so the server is slowed by TCP instead of
    /// filling memory; it reads again once they weigh `low` or less. State changes, closes and records are never
    /// dropped nor held back. While reading is held, the pong deadline does not run (the pong may be waiting unread).
    /// The events held stay within `high` plus the message that crossed it (the hold stops the read it came in at
    /// once); the connection holds at most the rest of that read (64 KiB) and one message of `maximumMessageSize` being
    /// received. Default 1 MiB and 256 KiB.
    public var inboundWatermarks = Watermarks.standard
    /// How many bytes may wait to be written: `send` suspends while more than `high` wait, until they are down to
    /// `low` (it throws `WebSocketSendError.notOpen` if the connection ends meanwhile, and nothing of the message
    /// was sent); the connection stops reading while the pongs it owes cannot go out. Default 1 MiB and 256 KiB.
    public var outboundWatermarks = Watermarks.standard
    /// How `wss://` connections verify the server: extra trust roots, SPKI pins, or (for local testing only) no
    /// verification. Default: TLS 1.2 or later, verified against the system trust store and the URL's host.
    /// A certificate that does not verify stops the session (`tls_failed`, not retried).
    public var tls = TLSOptions()
    /// Whether connections tunnel through an HTTP proxy with `CONNECT`: none (the default), a given one, or the one
    /// the environment names (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`). A refusal ends the attempt with
    /// `proxy_rejected` and its status, retried by the rules of a handshake rejection (407 and 403 stop); a proxy
    /// that cannot be reached with `proxy_unreachable`. Credentials never appear in a record, log or error.
    /// `URLSessionTransport` applies a proxy without credentials as its session's `connectionProxyDictionary` on
    /// Apple platforms and refuses the rest (see docs/platforms.md).
    public var proxy = ProxyConfiguration.none
    /// permessage-deflate (RFC 7692): nil (the default) offers none. Set, the client offers `offers` in order and
    /// compresses messages of at least `threshold` bytes once a server agrees; see `CompressionOptions` and
    /// docs/compression.md. `URLSessionTransport` refuses it (it cannot choose the offer's parameters).
    public var compression: CompressionOptions?
    /// Which path monitor runs while the client is started. Default `PathMonitoring.default`.
    public var pathMonitoring: PathMonitoring
    /// How much later than due the client's timer may fire (pings, pong deadlines, retries; never earlier), so
    /// that the timers of many clients share wake-ups. Nil (the default): 1 % of `heartbeatInterval`, at most
    /// 10 ms — 10 ms at the default 15 s interval, 0.5 ms at a 50 ms test interval.
    public var timerTolerance: Duration?
    #if os(Linux)
    /// The event loop whose timer heap wakes this client (with the continuous clock). Default: the
    /// process-wide shared loop. A private loop (which must outlive the client) keeps a group of clients off
    /// a busy shared loop; pair it with `SocketTransport(loop:)` for their sockets. `tether check` and the
    /// real-time tests do that.
    package var eventLoop: EventLoop = .shared
    #endif
    /// The messages to send first on every successful open — authentication, subscriptions —, in order, before any
    /// queued message and before the session is reported open (so a consumer never sends into an unauthenticated
    /// connection). Called once per open, in a task of the client's; it may await (to fetch a fresh token, say).
    /// The connect deadline (`connectTimeout`) covers it: a greeting that cannot be written in time closes the
    /// attempt as `connect_timeout`. Nil (the default): no greeting, open at once.
    public var greeting: (@Sendable () async -> [WebSocketMessage])?
    /// Makes the URL and headers of each connection attempt (a fresh token, a signed URL), told why the previous
    /// attempt ended; see `ConnectionRequest`. Called before every attempt, in a task of the client's, within the
    /// connect deadline (`connectTimeout`); `stop()` cancels it. A 401 or 403 on the upgrade asks it once more, at
    /// once, before the attempt counts as failed. An error it throws ends the attempt as `request_failed`, retried
    /// by the backoff and the retry policy. What it returns is never logged: header values, the URL's query and
    /// user info are redacted as the configuration's are. Nil (the default): every attempt uses `url` and
    /// `headers`.
    public var requestProvider: ConnectionRequest.Provider?
    /// The names of the opening handshake's response headers the app wants (`Set-Cookie`, a server's session id):
    /// those, and only those, are kept, in `ConnectionState.handshake?.headers` while open (case-insensitive names,
    /// each field as the server sent it). Default none. HTTP tokens.
    public var responseHeaderNames: [String] = []
    /// How much of what was written since a connection's last pong the client keeps, to name it in
    /// `WebSocketEvent.unconfirmed` should the connection be lost: the oldest messages up to this many and this many
    /// payload bytes; later ones are counted (`UnconfirmedMessages.notKept`), not kept. A pong forgets what it
    /// proved delivered. Default 1,000 and 1 MiB; 0 keeps none (the event then only counts).
    public var unconfirmedLimits = OutboxLimits()
    /// Acknowledged sends and resumable feeds (docs/delivery.md): opt-in, both off by default. With
    /// `acknowledgements`, `send(_:id:)` keeps a message until the server acknowledges it and writes it again after
    /// the next greeting when its connection ends first (at least once); with `feeds`, each sequence number of a
    /// stream is delivered once, gaps are reported, and the greeting asks the server to resume each stream.
    public var delivery = DeliveryOptions()
    /// How many redirects of the opening handshake (301, 302, 303, 307, 308) one attempt follows; 0 follows none (a
    /// redirect is then `handshake_rejected` with its status, not retried). Default 5. Each hop is checked as the
    /// URL is (scheme, host, port), goes through the proxy `proxy` names for its host, and is a `redirected` record
    /// (the status and the URL without user info or query); the hops share `connectTimeout`. A redirect that cannot
    /// be followed — one more than this, a loop, `wss` to `ws`, a `Location` that is not a URL — stops the session
    /// (`redirect_failed`, not retried). `Authorization` and `Cookie` go only to the first URL's origin. Every attempt
    /// starts from `url` again. See docs/client.md "Redirects".
    public var maximumRedirects = 5
    /// Where the session's log records go besides `events`, as log entries with a level and metadata: see `LogSink`
    /// and docs/logging.md for swift-log and `os.Logger`. Nil (the default): `events` only.
    public var logSink: LogSink?
    /// The transport that makes connections. Default: `URLSessionTransport` on Apple platforms,
    /// `SocketTransport` elsewhere.
    public var transport: any WebSocketTransport

    /// A setting of `session`, read and written as a property of this configuration: `configuration.backoff` is
    /// `configuration.session.backoff`.
    public subscript<Value>(dynamicMember setting: WritableKeyPath<SessionConfiguration, Value>) -> Value {
        get { self.session[keyPath: setting] }
        set { self.session[keyPath: setting] = newValue }
    }

    /// - Parameters mirror the properties (the session's settings those of `session`); every one but `url` has the
    ///   documented default.
    public init(
        url: URL,
        headers: [(name: String, value: String)] = [],
        subprotocols: [String] = [],
        heartbeatInterval: Duration = .seconds(15),
        heartbeatTimeout: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(10),
        probeTimeout: Duration = .seconds(2),
        stablePeriod: Duration = .seconds(30),
        backoff: BackoffPolicy = BackoffPolicy(),
        retryLaterDelay: Duration = .seconds(5),
        maximumRetryAfter: Duration = .seconds(300),
        maximumMessageSize: Int = 16 << 20,
        lifecycle: LifecyclePolicy = .closeInBackground,
        closeTimeout: Duration = .seconds(2),
        pathMonitoring: PathMonitoring = .default,
        transport: (any WebSocketTransport)? = nil
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.session = SessionConfiguration(
            heartbeatInterval: heartbeatInterval, heartbeatTimeout: heartbeatTimeout, connectTimeout: connectTimeout,
            probeTimeout: probeTimeout, stablePeriod: stablePeriod, backoff: backoff, retryLaterDelay: retryLaterDelay,
            maximumRetryAfter: maximumRetryAfter, lifecycle: lifecycle)
        self.session.closeTimeout = closeTimeout
        self.maximumMessageSize = maximumMessageSize
        self.pathMonitoring = pathMonitoring
        self.transport = transport ?? PlatformTransport.makeDefault()
    }


    /// `timerTolerance`, or its default.
    var effectiveTimerTolerance: Duration {
        self.timerTolerance ?? min(self.session.heartbeatInterval / 100, .milliseconds(10))
    }

    /// Checks every duration and number against what the client can run with, and the headers and
    /// subprotocols against what a handshake can carry. The machine counts whole milliseconds, so a timeout
    /// under 1 ms (which would round to 0) is rejected like a zero one. The URL is not checked here: a URL the
    /// transport cannot serve fails the session when it connects.
    /// - Throws: `WebSocketConfigurationError` naming the first property out of range.
    public func validate() throws(WebSocketConfigurationError) {
        // The session's settings: one validation, the machine's own (`SessionConfiguration.settingOutOfRange`).
        if let problem = self.machineSession.settingOutOfRange {
            throw WebSocketConfigurationError(
                property: problem.setting, requirement: problem.requirement, value: problem.value)
        }
        if self.maximumRedirects < 0 {
            throw WebSocketConfigurationError(
                property: "maximumRedirects", requirement: "at least 0 (0 follows none)",
                value: "\(self.maximumRedirects)")
        }
        if let sink = self.logSink, sink.capacity < 1 {
            throw WebSocketConfigurationError(
                property: "logSink.capacity", requirement: "at least 1 record", value: "\(sink.capacity)")
        }
        if self.unconfirmedLimits.count < 0 || self.unconfirmedLimits.bytes < 0 {
            throw WebSocketConfigurationError(
                property: "unconfirmedLimits", requirement: "count and bytes at least 0",
                value: "count \(self.unconfirmedLimits.count), bytes \(self.unconfirmedLimits.bytes)")
        }
        if let tolerance = self.timerTolerance, tolerance < .zero {
            throw WebSocketConfigurationError(
                property: "timerTolerance", requirement: "at least 0", value: "\(tolerance)")
        }
        guard self.maximumMessageSize >= 1 else {
            throw WebSocketConfigurationError(
                property: "maximumMessageSize", requirement: "at least 1 byte", value: "\(self.maximumMessageSize)")
        }
        for (property, watermarks) in [
            ("inboundWatermarks", self.inboundWatermarks), ("outboundWatermarks", self.outboundWatermarks),
        ] where !watermarks.isValid {
            throw WebSocketConfigurationError(
                property: property, requirement: "1 <= high and 0 <= low <= high",
                value: "high \(watermarks.high), low \(watermarks.low)")
        }
        // The rules every transport's handshake applies; checked here so that no platform sends, drops or
        // rewrites a bad header silently. Subprotocols and headers are checked apart, so that the error names
        // the property without reading the wire error's text. Header values are never repeated in the error.
        if !self.tls.pins.allSatisfy(TLSOptions.isWellFormed(pin:)) {
            throw WebSocketConfigurationError(
                property: "tls.pins", requirement: "sha256/ followed by the base64 of a SHA-256 digest",
                value: "a malformed pin")
        }
        if let identity = self.tls.clientIdentity, let problem = identity.problem(for: self.transport) {
            throw WebSocketConfigurationError(
                property: "tls.clientIdentity",
                requirement: "a readable certificate chain and the private key of its certificate, decrypted by the "
                    + "passphrase when encrypted", value: problem)
        }
        if let compression = self.compression {
            try compression.validate()
        }
        // What the transport cannot honour (TLS options, a proxy) is refused here, never ignored.
        try self.transport.checkSupport(of: self.transportRequest)
        do throws(WireUsageError) {
            try ClientHandshake.checkOffer(subprotocols: self.subprotocols, headers: [])
        } catch {
            throw WebSocketConfigurationError(
                property: "subprotocols", requirement: "distinct HTTP tokens", value: "a duplicate or a non-token")
        }
        if let problem = self.problem(with: self.headers) { throw problem }
        if let name = self.responseHeaderNames.first(where: { !HTTPToken.isValid($0) }) {
            throw WebSocketConfigurationError(
                property: "responseHeaderNames", requirement: "HTTP tokens",
                value: name.isEmpty ? "an empty name" : name)
        }
    }

    /// What is wrong with `headers` as extra headers of this configuration's handshake, if anything: the rules every
    /// transport's handshake applies, checked here so that no platform sends, drops or rewrites a bad header
    /// silently (those of the configuration when the client is created, those of a `requestProvider` before each
    /// attempt). The error names the header, never its value.
    func problem(with headers: [(name: String, value: String)]) -> WebSocketConfigurationError? {
        if self.compression != nil, headers.contains(where: { $0.name.lowercased() == "sec-websocket-extensions" }) {
            return WebSocketConfigurationError(
                property: "headers", requirement: "free of Sec-WebSocket-Extensions while compression is set",
                value: "Sec-WebSocket-Extensions")
        }
        do throws(WireUsageError) {
            try ClientHandshake.checkOffer(subprotocols: [], headers: headers)
            return nil
        } catch .reservedHeader(let name) {
            return WebSocketConfigurationError(
                property: "headers", requirement: "free of the headers the handshake sets itself", value: name)
        } catch .invalidHandshakeField(let field) {
            // The field is "header name" or "value of header X": never the value itself.
            return WebSocketConfigurationError(
                property: "headers", requirement: "named by HTTP tokens, with values free of control characters "
                    + "other than tab", value: field)
        } catch {
            return WebSocketConfigurationError(property: "headers", requirement: "sendable", value: "\(error)")
        }
    }

    /// The session as the machine takes it: `session`, with what the client does on every open (a greeting, a feed's
    /// resume) and before every attempt (a request provider) told, and the bounds of `delivery` (declared there).
    var machineSession: SessionConfiguration {
        var session = self.session
        session.greets = self.greeting != nil || self.delivery.feeds?.resume != nil
        session.providesRequests = self.requestProvider != nil
        session.delivery = self.delivery.settings
        return session
    }

    /// The transport's own connect bound under a client: far beyond the machine's deadline (twice it plus 1 s,
    /// saturating), so that the machine's timer decides; see `TransportRequest.connectTimeout`.
    static func transportBackstop(connectTimeout: Duration) -> Duration {
        let (doubled, overflow) = connectTimeout.milliseconds.multipliedReportingOverflow(by: 2)
        let backstop = overflow || doubled.addingReportingOverflow(1_000).overflow ? Int.max : doubled + 1_000
        return .milliseconds(backstop)
    }

    /// What the transport needs for each connection.
    var transportRequest: TransportRequest {
        TransportRequest(
            url: self.url,
            headers: self.headers,
            subprotocols: self.subprotocols,
            maximumMessageSize: self.maximumMessageSize,
            connectTimeout: Self.transportBackstop(connectTimeout: self.session.connectTimeout),
            closeTimeout: self.session.closeTimeout,
            outboundWatermarks: self.outboundWatermarks,
            tls: self.tls,
            proxy: self.proxy,
            compression: self.compression,
            responseHeaderNames: self.responseHeaderNames,
            maximumRedirects: self.maximumRedirects
        )
    }
}
