import Foundation

/// Options of `tether check`.
public struct CheckOptions: Equatable, Sendable {
    /// Where `tether-report.json` and `tether-report.html` go. Default: the current directory.
    public var outputDirectory: String = "."
    /// Run only this scenario. Default: all.
    public var only: String?
    /// Print a machine-readable summary on stdout instead of the table.
    public var json = false

    public init(outputDirectory: String = ".", only: String? = nil, json: Bool = false) {
        self.outputDirectory = outputDirectory
        self.only = only
        self.json = json
    }
}

/// One `--header Name:Value`.
public struct HeaderOption: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Options of `tether connect URL`. Times are milliseconds.
public struct ConnectOptions: Equatable, Sendable {
    public var url: URL
    public var headers: [HeaderOption] = []
    public var protocols: [String] = []
    /// Heartbeat interval. Default 15,000, the client's default.
    public var interval = 15_000
    /// Pong timeout. Default 5,000.
    public var timeout = 5_000
    /// First backoff delay. Default 1,000.
    public var backoffBase = 1_000
    /// Largest backoff delay. Default 60,000.
    public var backoffCap = 60_000
    /// Largest message accepted. Default 16 MiB.
    public var maximumMessageSize = 16 << 20
    /// Exit after this many received messages.
    public var count: Int?
    /// Exit after this many milliseconds.
    public var duration: Int?
    /// Print no message bodies.
    public var quiet = false
    /// Print text messages as received, control characters included. Default off: they are escaped as `\u{XX}`,
    /// so that a server cannot send escape sequences to the user's terminal.
    public var raw = false
    /// Print every event record as a JSON line on stdout.
    public var eventsJSONL = false
    /// Run the platform path monitor (rtnetlink on Linux). Default on; `--no-path-monitor` turns it off.
    public var pathMonitor = true
    /// Send the lines of standard input, and end at its end. Default on; `--no-stdin` turns it off: standard input
    /// is not read, and the command runs until `--count`, `--duration`, a signal or a non-retryable failure.
    public var readsStdin = true
    /// PEM files of CA certificates trusted for `wss://` besides the system's (`--ca-file`, repeatable).
    public var caFiles: [String] = []
    /// SPKI pins, `sha256/BASE64` (`--pin`, repeatable).
    public var pins: [String] = []
    /// No certificate verification (`--insecure`): local testing only.
    public var insecure = false
    /// `--queue`: stdin lines go through the client's outbox (`SendPolicy.queued`), kept in order across reconnects
    /// and sent after the greeting, instead of waiting for an open connection line by line.
    public var queue = false
    /// `--greeting-file PATH`: each line of the file is a text message sent first on every open.
    public var greetingFile: String?

    public init(url: URL) {
        self.url = url
    }
}

/// Options of `tether serve`. Times are milliseconds.
public struct ServeOptions: Equatable, Sendable {
    public var host = "127.0.0.1"
    /// 0 picks a free port.
    public var port = 0
    public var pongDelay: Int?
    public var noPong = false
    public var closeAfter: Int?
    public var closeCode: UInt16?
    public var closeReason = ""
    public var reject: Int?
    public var retryAfter: Int?
    public var send: Int?
    public var every = 0
    public var size = 16
    public var echo = false
    public var pingEvery: Int?
    /// Close a connection whose upgrade request is not complete after this long (`TestServer`'s default).
    public var handshakeTimeout = 10_000
    /// At most this many connections in the handshake; a new one resets the oldest.
    public var maxHandshaking = 128
    /// Records kept per list of a connection (counts stay exact).
    public var recordLimit = 1_000
    /// Serve `wss://` with this PEM certificate chain (`--tls-cert`) and private key (`--tls-key`).
    public var tlsCertificate: String?
    public var tlsKey: String?

    public init() {}
}

/// A parsed command line.
public enum Command: Equatable, Sendable {
    case check(CheckOptions)
    case connect(ConnectOptions)
    case serve(ServeOptions)
    /// `--help`, `-h` or `help [COMMAND]`: print the usage (of one command) and exit 0.
    case help(String?)
}
