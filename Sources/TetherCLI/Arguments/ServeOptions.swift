import Foundation
import Tether

/// Options of `tether serve`. Times are milliseconds.
package struct ServeOptions: Equatable, Sendable {
    package var host = "127.0.0.1"
    /// 0 picks a free port.
    package var port = 0
    package var pongDelay: Int?
    package var noPong = false
    package var closeAfter: Int?
    package var closeCode: UInt16?
    package var closeReason = ""
    package var reject: Int?
    package var retryAfter: Int?
    package var send: Int?
    package var every = 0
    package var size = 16
    /// Echo every data message back, as websocat and wscat's servers do. Default on; `--no-echo` turns it off.
    package var echo = true
    /// `--deflate`: accept a client's permessage-deflate offer (the RFC's defaults).
    package var deflate = false
    package var pingEvery: Int?
    /// `--broadcast-every MS`: the server-wide numbered feed (`Scenario.Broadcast`), one number every MS to every open
    /// connection.
    package var broadcastEvery: Int?
    /// `--delivery` (or any `--feed*` flag): speak the test server's acknowledging, resumable feed protocol
    /// (`Scenario.DeliveryProtocol`, docs/delivery.md).
    package var delivery = false
    /// `--feed NAME` (repeatable): the streams published; `feed` when none is named.
    package var feeds: [String] = []
    /// `--feed-every MS`: a number of each stream every MS. Default 1,000.
    package var feedEvery = 1_000
    /// `--feed-retained N`: how many of each stream's latest numbers a resume can get again. Default 1,000.
    package var feedRetained = 1_000
    /// Close a connection whose upgrade request is not complete after this long (`TestServer`'s default).
    package var handshakeTimeout = 10_000
    /// At most this many connections in the handshake; a new one resets the oldest.
    package var maxHandshaking = 128
    /// Records kept per list of a connection (counts stay exact).
    package var recordLimit = 1_000
    /// Serve `wss://` with this PEM certificate chain (`--tls-cert`) and private key (`--tls-key`).
    package var tlsCertificate: String?
    package var tlsKey: String?
    /// `--require-client-cert F`: require a client certificate issued by a CA certificate of PEM file F (mutual TLS).
    package var clientCertificateAuthorities: String?

    package init() {}
}
