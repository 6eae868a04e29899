#if os(Linux)
import TetherCore
import TetherPOSIX
import TetherWire

/// The proxy a `SocketConnection` tunnels through.
enum SocketProxy: Sendable {
    case http(HTTPProxy)
    case socks(SOCKSProxy)

    var host: String {
        switch self {
        case .http(let proxy): proxy.host
        case .socks(let proxy): proxy.host
        }
    }

    var port: Int {
        switch self {
        case .http(let proxy): proxy.port
        case .socks(let proxy): proxy.port
        }
    }

    /// Whether the client must resolve the origin's name itself and hand the proxy an address (`socks5://`).
    var needsOriginAddress: Bool {
        if case .socks(let proxy) = self { return !proxy.proxyResolvesNames }
        return false
    }
}

/// Opening the tunnel through a proxy, sans I/O: HTTP `CONNECT` or SOCKS5 `CONNECT`, the same steps for both.
struct ProxyTunnel: Sendable {
    enum Outcome: Equatable, Sendable {
        /// Wait for more of the proxy's answer.
        case needMoreInput
        /// Write these bytes to the proxy and wait for its answer.
        case send([UInt8])
        /// The tunnel is open and nothing of the origin's came with the answer.
        case open
        /// The tunnel did not open: end the attempt with this (gracefully: the proxy answered in its protocol).
        case refused(TransportEnd, graceful: Bool)
    }

    private enum Exchange: Sendable {
        case http(ProxyConnectResponseParser)
        case socks(SOCKS5Negotiation)
    }

    private var state: Exchange
    private let firstMessage: [UInt8]

    /// - Parameter originAddress: for `socks5://`, the origin's address as the client resolved it.
    init(proxy: SocketProxy, host: String, port: Int, originAddress: SocketAddress?) throws(SOCKS5Error) {
        switch proxy {
        case .http(let proxy):
            let credentials = proxy.credentials.map { (user: $0.user, password: $0.password) }
            self.state = .http(ProxyConnectResponseParser())
            self.firstMessage = ProxyConnect.request(host: host, port: port, credentials: credentials)
        case .socks(let proxy):
            // An IP literal goes as an address whoever resolves names; a name as the client resolved it, or as is.
            let target: SOCKS5Negotiation.Target =
                if let address = originAddress ?? SocketAddress(ip: host, port: port) {
                    .address(address.addressBytes, port: port)
                } else {
                    .name(host, port: port)
                }
            let credentials = proxy.credentials.map { (user: $0.user, password: $0.password) }
            var negotiation = try SOCKS5Negotiation(target: target, credentials: credentials)
            self.firstMessage = negotiation.start()
            self.state = .socks(negotiation)
        }
    }

    /// The first bytes to write once connected to the proxy.
    var request: [UInt8] { self.firstMessage }

    /// Takes the proxy's bytes.
    mutating func received(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        switch self.state {
        case .http(var parser):
            parser.append(bytes)
            defer { self.state = .http(parser) }
            let response: ProxyConnectResponse
            do throws(HandshakeError) {
                guard let parsed = try parser.parse() else { return .needMoreInput }
                response = parsed
            } catch {
                let detail = "the proxy's answer to CONNECT is malformed"
                return .refused(.handshakeInvalid(detail: detail), graceful: false)
            }
            guard response.opensTunnel else {
                let end = TransportEnd.proxyRejected(
                    status: response.status, retryAfter: response.retryAfter?.millisecondsFromNow)
                return .refused(end, graceful: true)
            }
            return response.remaining.isEmpty ? .open : Self.earlyData
        case .socks(var negotiation):
            defer { self.state = .socks(negotiation) }
            do throws(SOCKS5Error) {
                switch try negotiation.receive(bytes) {
                case .needMoreInput: return .needMoreInput
                case .send(let bytes): return .send(bytes)
                case .established(let remaining): return remaining.isEmpty ? .open : Self.earlyData
                }
            } catch {
                return Self.refusal(error)
            }
        }
    }

    /// Nothing may come through the tunnel before the client has spoken.
    private static let earlyData = Outcome.refused(
        .handshakeInvalid(detail: "the proxy sent data before the origin could answer"), graceful: false)

    /// A SOCKS refusal as the session sees it: `socksRejected` with the refusal it names (recorded as
    /// `proxy_rejected`, retried by `SOCKSRefusal.isPermanent`); nil for an answer that is not SOCKS5 or a request
    /// that could not be encoded.
    static func refusal(for error: SOCKS5Error) -> SOCKSRefusal? {
        switch error {
        case .noAcceptableMethod: .noAcceptableMethod
        case .authenticationFailed: .authenticationFailed
        case .rejected(let reply): SOCKSRefusal(reply: reply.code)
        case .malformed, .unusableRequest: nil
        }
    }

    private static func refusal(_ error: SOCKS5Error) -> Outcome {
        guard let refusal = Self.refusal(for: error) else {
            return .refused(.handshakeInvalid(detail: "the SOCKS proxy's answer is malformed"), graceful: false)
        }
        return .refused(.socksRejected(refusal), graceful: true)
    }
}
#endif
