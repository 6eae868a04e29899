/// The scenarios of `tether check`, in the order they run.
package enum CheckCatalog {
    /// A scenario's name (for `--only`) and what it proves.
    package struct Entry: Equatable, Sendable {
        package var name: String
        package var title: String
    }

    package static let entries: [Entry] = [
        Entry(name: "normal-pong", title: "Normal pong: stays open, RTT recorded"),
        Entry(name: "pong-delay-inside", title: "Pong delayed inside the timeout: stays open"),
        Entry(name: "pong-delay-past", title: "Pong delayed past the timeout: one pong_timeout close, reconnect"),
        Entry(name: "server-close-1000", title: "Server closes with 1000: retry with backoff"),
        Entry(name: "server-close-1008", title: "Server closes with 1008 (policy): failed, no retry"),
        Entry(name: "server-close-1013", title: "Server closes with 1013 (try later): a longer retry delay"),
        Entry(name: "connection-refused", title: "Connection refused: connect_failed and growing backoff"),
        Entry(name: "handshake-503", title: "Handshake rejected 503 with Retry-After: the wait is honoured"),
        Entry(name: "handshake-401", title: "Handshake rejected 401: failed, visibly"),
        Entry(name: "receive-loop", title: "Receive loop: 2,000 messages with pings in between, in order"),
        Entry(name: "stale-callbacks", title: "Stale callbacks of an old generation change nothing"),
        Entry(name: "stop-connecting", title: "Stop while connecting leaves nothing behind"),
        Entry(name: "stop-waiting", title: "Stop while waiting for a retry leaves nothing behind"),
        Entry(name: "stop-open", title: "Stop while open: close 1000, nothing behind"),
        Entry(name: "path-loss", title: "Path loss and recovery: offline uses no attempts, reconnect at once"),
        Entry(name: "tls", title: "wss:// with a private CA: verified, heartbeat and messages over TLS"),
        Entry(name: "tls-bad-certificate", title: "wss:// certificate for another host: tls_failed, no retry"),
        Entry(name: "background-keep", title: "Background with keepAndProbe: every message delivered"),
        Entry(name: "reconnect-offline", title: "reconnectNow while the path says unavailable: an attempt goes out"),
        Entry(name: "outbox-restart", title: "Queued sends cross a server restart in order after the greeting"),
        Entry(name: "retry-give-up", title: "A bounded retry gives up visibly after N attempts"),
        Entry(name: "slow-consumer", title: "Slow consumer: a 64 MiB flood held at the inbound watermark, in order"),
        Entry(name: "ping-flood", title: "Ping flood from a peer that never reads: pongs bounded"),
    ]

    /// Every scenario name, in order.
    package static var names: [String] { self.entries.map(\.name) }
}
