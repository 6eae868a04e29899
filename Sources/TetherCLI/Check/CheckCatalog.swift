/// The scenarios of `tether check`, in the order they run: each entry carries its name, what it proves and its body,
/// so that a scenario cannot be listed without one, nor written without being listed.
package enum CheckCatalog {
    /// A scenario's name (for `--only`), what it proves, and (on Linux, where the check runs) the scenario itself.
    package struct Entry: Sendable {
        package var name: String
        package var title: String
        #if os(Linux)
        let body: CheckScenarios.Body
        #endif
    }

    private typealias S = CheckScenarios

    package static let entries: [Entry] = [
        Entry(name: "normal-pong", title: "Normal pong: stays open, RTT recorded", body: S.normalPong),
        Entry(name: "pong-delay-inside", title: "Pong delayed inside the timeout: stays open", body: S.pongDelayInside),
        Entry(
            name: "pong-delay-past", title: "Pong delayed past the timeout: one pong_timeout close, reconnect",
            body: S.pongDelayPast
        ),
        Entry(
            name: "server-close-1000", title: "Server closes with 1000: retry with backoff",
            body: { run throws(CheckFailure) in try await S.serverClose(run, code: 1000) }
        ),
        Entry(
            name: "server-close-1008", title: "Server closes with 1008 (policy): failed, no retry",
            body: { run throws(CheckFailure) in try await S.serverClose(run, code: 1008) }
        ),
        Entry(
            name: "server-close-1013", title: "Server closes with 1013 (try later): a longer retry delay",
            body: { run throws(CheckFailure) in try await S.serverClose(run, code: 1013) }
        ),
        Entry(
            name: "connection-refused", title: "Connection refused: connect_failed and growing backoff",
            body: S.connectionRefused
        ),
        Entry(
            name: "handshake-503", title: "Handshake rejected 503 with Retry-After: the wait is honoured",
            body: S.handshake503
        ),
        Entry(name: "handshake-401", title: "Handshake rejected 401: failed, visibly", body: S.handshake401),
        Entry(
            name: "token-refresh", title: "Tokens that expire: a 401 asks the request provider, the session goes on",
            body: S.tokenRefresh
        ),
        Entry(
            name: "receive-loop", title: "Receive loop: 2,000 messages with pings in between, in order",
            body: S.receiveLoop
        ),
        Entry(
            name: "stale-callbacks", title: "Stale callbacks of an old generation change nothing",
            body: S.staleCallbacks
        ),
        Entry(name: "stop-connecting", title: "Stop while connecting leaves nothing behind", body: S.stopConnecting),
        Entry(name: "stop-waiting", title: "Stop while waiting for a retry leaves nothing behind", body: S.stopWaiting),
        Entry(name: "stop-open", title: "Stop while open: close 1000, nothing behind", body: S.stopOpen),
        Entry(
            name: "path-loss", title: "Path loss and recovery: offline uses no attempts, reconnect at once",
            body: S.pathLoss
        ),
        Entry(
            name: "handover", title: "Make-before-break on an interface switch: never leaves open, no gap in the feed",
            body: S.handover
        ),
        Entry(name: "tls", title: "wss:// with a private CA: verified, heartbeat and messages over TLS", body: S.tls),
        Entry(
            name: "tls-bad-certificate", title: "wss:// certificate for another host: tls_failed, no retry",
            body: S.tlsBadCertificate
        ),
        Entry(
            name: "mutual-tls",
            title: "wss:// requiring a client certificate: presented and verified; none: tls_failed",
            body: S.mutualTLS
        ),
        Entry(
            name: "background-keep", title: "Background with keepAndProbe: every message delivered",
            body: S.backgroundKeep
        ),
        Entry(
            name: "reconnect-offline", title: "reconnectNow while the path says unavailable: an attempt goes out",
            body: S.reconnectOffline
        ),
        Entry(
            name: "outbox-restart", title: "Queued sends cross a server restart in order after the greeting",
            body: S.outboxRestart
        ),
        Entry(
            name: "delivery", title: "Acknowledged sends and a feed cut mid-frame: nothing lost, nothing twice",
            body: S.delivery
        ),
        Entry(name: "retry-give-up", title: "A bounded retry gives up visibly after N attempts", body: S.retryGiveUp),
        Entry(
            name: "slow-link", title: "A large message over a throttled link arrives on the first connection",
            body: S.slowLink
        ),
        Entry(
            name: "compression", title: "permessage-deflate: JSON-like echoes under half their size on the wire",
            body: S.compression
        ),
        Entry(
            name: "deflate-bomb", title: "A 1 MB message inflating to 1 GiB: close 1009, memory bounded",
            body: S.deflateBomb
        ),
        Entry(
            name: "slow-consumer", title: "Slow consumer: a 64 MiB flood held at the inbound watermark, in order",
            body: S.slowConsumer
        ),
        Entry(name: "ping-flood", title: "Ping flood from a peer that never reads: pongs bounded", body: S.pingFlood),
    ]

    /// Every scenario name, in order.
    package static var names: [String] { self.entries.map(\.name) }
}
