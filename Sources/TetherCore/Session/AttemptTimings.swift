/// How long each step of one connection attempt took, in milliseconds from the attempt's start (when the transport
/// was asked to connect): resolving the name, each TCP connect of the Happy Eyeballs race, the proxy's tunnel, TLS
/// (full or resumed), the opening handshake (the HTTP upgrade) and the app's greeting. Carried by the `.opened`
/// record of an attempt and by the `.closed` record of an attempt that failed (`LogRecord.timings`), with the steps
/// reached so far: the step the attempt failed in is there, `finished` false, timed up to the failure.
///
/// A step the attempt did not take is nil (no proxy, no TLS for `ws://`, no greeting configured, a numeric host on
/// Apple). After a redirect of the upgrade, the steps are the last hop's (their starts count from the attempt's
/// start, so the earlier hops show as the time before them). Never a name, a URL or a header: the TCP attempts
/// name the numeric addresses tried, as a failed connect's record does (`ConnectAttempt`).
public struct AttemptTimings: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// One step: when it started (ms from the attempt's start), how long it took (ms), and whether it finished
    /// (false: the attempt ended during it, and `duration` runs up to that end).
    public struct Step: Equatable, Hashable, Sendable, CustomStringConvertible {
        public var start: Int
        public var duration: Int
        public var finished: Bool

        public init(start: Int, duration: Int, finished: Bool = true) {
            self.start = start
            self.duration = duration
            self.finished = finished
        }

        /// When the step ended (or the attempt did, during it): `start + duration`.
        public var end: Int { self.start + self.duration }

        /// For example `+3 12ms`, `+3 5000ms unfinished`.
        public var description: String {
            "+\(self.start) \(self.duration)ms" + (self.finished ? "" : " unfinished")
        }
    }

    /// One TCP connect of the race: the numeric address and port tried, when it started, how long it took, and
    /// how it ended.
    public struct TCPAttempt: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// How a TCP connect of the race ended.
        public enum Outcome: Equatable, Hashable, Sendable, CustomStringConvertible {
            /// It won the race (the attempt went on over it).
            case connected
            /// It failed (refused, unreachable, timed out at the connect deadline, ...).
            case failed(ConnectFailure)
            /// It was given up: another connect won, or the attempt ended another way first.
            case abandoned
            /// It had not ended when the timings were taken: the attempt's connect deadline came first.
            case unfinished

            /// `connected`, `abandoned`, `unfinished`, or the failure (`refused`, `timedOut`).
            public var description: String {
                switch self {
                case .connected: "connected"
                case .failed(let failure): failure.description
                case .abandoned: "abandoned"
                case .unfinished: "unfinished"
                }
            }
        }

        /// The numeric address and port (`192.0.2.2:80`, `[2001:db8::2]:443`), as the resolver gave it.
        public var address: String
        public var start: Int
        public var duration: Int
        public var outcome: Outcome

        public init(address: String, start: Int, duration: Int, outcome: Outcome) {
            self.address = address
            self.start = start
            self.duration = duration
            self.outcome = outcome
        }

        /// The address family: `ipv6` for a bracketed address, else `ipv4`.
        public var family: String { self.address.hasPrefix("[") ? "ipv6" : "ipv4" }

        /// For example `127.0.0.1:8080 +1 0ms connected`.
        public var description: String { "\(self.address) +\(self.start) \(self.duration)ms \(self.outcome)" }
    }

    /// Whether TLS negotiated a new session or resumed one the client kept (no certificate exchanged).
    public enum TLSHandshake: String, Equatable, Hashable, Sendable {
        case full, resumed
    }

    /// Resolving the host's name (the proxy's, through a proxy; a numeric host takes no time); nil where the
    /// transport does not see it.
    public var resolve: Step?
    /// Each TCP connect of the race, in the order they started (to the proxy, through one).
    public var tcp: [TCPAttempt]
    /// Opening the proxy's tunnel (HTTP `CONNECT` or SOCKS5), from the connect to the proxy to its answer.
    public var proxy: Step?
    /// The TLS handshake (`wss://`).
    public var tls: Step?
    /// Full or resumed, once known (nil without TLS, before its handshake completed, or where the platform does not
    /// say: `URLSessionTransport`).
    public var tlsHandshake: TLSHandshake?
    /// The opening handshake: from the upgrade request (queued behind TLS, it goes out when TLS completes) to the
    /// server's answer.
    public var upgrade: Step?
    /// The app's greeting (`WebSocketConfiguration.greeting`), from the open to the greeting's last message handed
    /// to the transport.
    public var greeting: Step?

    public init(
        resolve: Step? = nil, tcp: [TCPAttempt] = [], proxy: Step? = nil, tls: Step? = nil,
        tlsHandshake: TLSHandshake? = nil, upgrade: Step? = nil, greeting: Step? = nil
    ) {
        self.resolve = resolve
        self.tcp = tcp
        self.proxy = proxy
        self.tls = tls
        self.tlsHandshake = tlsHandshake
        self.upgrade = upgrade
        self.greeting = greeting
    }

    /// When the latest step ended: the time from the attempt's start to its open (or its failure).
    public var elapsed: Int {
        let steps = [self.resolve, self.proxy, self.tls, self.upgrade, self.greeting].compactMap { $0?.end }
        return (steps + self.tcp.map { $0.start + $0.duration }).max() ?? 0
    }

    /// The steps as fields, in the order they happen, with the names `tether connect --events` uses: `resolve_ms`,
    /// `tcp` (each connect as in `TCPAttempt.description`, separated by `, `), `proxy_ms`, `tls_ms`, `tls`
    /// (`full` or `resumed`), `upgrade_ms`, `greeting_ms`; a step's value is its duration, and an unfinished step's
    /// name ends in `_unfinished_ms` instead.
    public var fields: [(name: String, value: LogRecord.Event.FieldValue)] {
        var fields: [(name: String, value: LogRecord.Event.FieldValue)] = []
        func add(_ name: String, _ step: Step?) {
            guard let step else { return }
            fields.append((name + (step.finished ? "_ms" : "_unfinished_ms"), .number(step.duration)))
        }
        add("resolve", self.resolve)
        if !self.tcp.isEmpty { fields.append(("tcp", .name(self.tcp.map(\.description).joined(separator: ", ")))) }
        add("proxy", self.proxy)
        add("tls", self.tls)
        if let handshake = self.tlsHandshake { fields.append(("tls", .name(handshake.rawValue))) }
        add("upgrade", self.upgrade)
        add("greeting", self.greeting)
        return fields
    }

    /// For example `resolve +0 1ms, tcp [127.0.0.1:8080 +1 0ms connected], tls +1 4ms full, upgrade +5 1ms`.
    public var description: String {
        var parts: [String] = []
        if let resolve = self.resolve { parts.append("resolve \(resolve)") }
        if !self.tcp.isEmpty { parts.append("tcp [" + self.tcp.map(\.description).joined(separator: ", ") + "]") }
        if let proxy = self.proxy { parts.append("proxy \(proxy)") }
        if let tls = self.tls {
            parts.append("tls \(tls)" + (self.tlsHandshake.map { " \($0.rawValue)" } ?? ""))
        }
        if let upgrade = self.upgrade { parts.append("upgrade \(upgrade)") }
        if let greeting = self.greeting { parts.append("greeting \(greeting)") }
        return parts.joined(separator: ", ")
    }
}
