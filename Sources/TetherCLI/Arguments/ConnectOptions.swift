import Foundation
import Tether

/// Options of `tether connect URL`. Times are milliseconds.
package struct ConnectOptions: Equatable, Sendable {
    package var url: URL
    package var headers: [HeaderOption] = []
    package var protocols: [String] = []
    /// Heartbeat interval. Default 15,000, the client's default.
    package var interval = 15_000
    /// Pong timeout. Default 5,000.
    package var timeout = 5_000
    /// How long TCP connect, TLS, the opening handshake and the greeting may take. Default 10,000, the client's.
    package var connectTimeout = 10_000
    /// First backoff delay. Default 1,000.
    package var backoffBase = 1_000
    /// Largest backoff delay. Default 60,000.
    package var backoffCap = 60_000
    /// Largest message accepted. Default 16 MiB.
    package var maximumMessageSize = 16 << 20
    /// Exit after this many received messages.
    package var count: Int?
    /// Exit after this many milliseconds.
    package var duration: Int?
    /// Print no message bodies.
    package var quiet = false
    /// Print text messages as received, control characters included. Default off: they are escaped as `\u{XX}`,
    /// so that a server cannot send escape sequences to the user's terminal.
    package var raw = false
    /// Print every event record as a JSON line on stdout.
    package var eventsJSONL = false
    /// `--events-text`: with `eventsJSONL`, each `message` record carries the message: its text (`text`), or a binary
    /// message's bytes in base64 (`base64`). Off by default: records hold no payload unless asked.
    package var eventsText = false
    /// Run the platform path monitor (rtnetlink on Linux). Default on; `--no-path-monitor` turns it off.
    package var pathMonitor = true
    /// Send the lines of standard input, and end at its end. Default on; `--no-stdin` turns it off: standard input
    /// is not read, and the command runs until `--count`, `--duration`, a signal or a non-retryable failure.
    package var readsStdin = true
    /// PEM files of CA certificates trusted for `wss://` besides the system's (`--ca-file`, repeatable).
    package var caFiles: [String] = []
    /// SPKI pins, `sha256/BASE64` (`--pin`, repeatable).
    package var pins: [String] = []
    /// No certificate verification (`--insecure`): local testing only.
    package var insecure = false
    /// The client certificate chain (`--cert F`) and its private key (`--key F`), PEM files, presented to a server
    /// that asks for one (mutual TLS).
    package var clientCertificate: String?
    package var clientKey: String?
    /// `--key-passphrase-env VAR`: the environment variable holding the passphrase of an encrypted `--key`. A
    /// passphrase is never taken on the command line, where `ps` and shell histories would show it.
    package var keyPassphraseVariable: String?
    /// `--queue`: stdin lines go through the client's outbox (`SendPolicy.queued`), kept in order across reconnects
    /// and sent after the greeting, instead of waiting for an open connection line by line.
    package var queue = false
    /// `--acknowledged`: stdin lines go as acknowledged sends in the test server's delivery protocol
    /// (`send ID LINE`, docs/delivery.md): kept until the server acknowledges them, written again after a reconnect.
    package var acknowledged = false
    /// `--feed STREAM` (repeatable): subscribe to STREAM in the test server's delivery protocol, resuming after the
    /// last number delivered on every open; each number is printed once, and a gap is reported.
    package var feeds: [String] = []
    /// `--greeting-file PATH`: each line of the file is a text message sent first on every open.
    package var greetingFile: String?
    /// `--proxy URL` (`.http`) or `--proxy-env` (`.environment`). Nil when neither is given: the client's default,
    /// `.none` (a direct connection, whatever `http_proxy` and the like say).
    package var proxy: ProxyConfiguration?
    /// `--deflate`: offer permessage-deflate (`CompressionOptions`); `--deflate-window BITS` limits both windows,
    /// `--deflate-no-context-takeover` asks both sides to reset their context per message.
    package var deflate: CompressionOptions?
    /// `--interface-switch make-before-break|probe`: what a switch of the path's interfaces while open does. Nil when
    /// not given: the client's default.
    package var interfaceSwitch: InterfaceSwitchPolicy?

    package init(url: URL) {
        self.url = url
    }
}
