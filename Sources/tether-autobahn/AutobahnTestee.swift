import Foundation
import Tether
import TetherCore

/// The testee's command line.
struct AutobahnOptions {
    /// How the testee reaches the server.
    enum Via: String {
        /// `SocketTransport` directly: the codec and the connection core, nothing above them.
        case transport
        /// `WebSocketClient` over the platform transport, heartbeat out of the way, stopped at each case's first close.
        case client
    }

    struct InvalidOption: Error, CustomStringConvertible {
        var description: String
    }

    var server = URL(string: "ws://127.0.0.1:9001")!
    var agent = ""
    var via = Via.transport
    /// Which cases to run (1-based, inclusive); nil runs all the server has.
    var cases: ClosedRange<Int>?
    /// For a `wss://` server: the CA certificates (PEM files) to trust besides the system's.
    var caFiles: [String] = []

    /// What every request of the run carries.
    var tls: TLSOptions { TLSOptions(additionalTrustRoots: self.caFiles.map { .pemFile($0) }) }

    mutating func set(_ flag: String, _ value: String) throws(InvalidOption) {
        switch flag {
        case "--url":
            guard let url = URL(string: value), url.scheme == "ws" || url.scheme == "wss" else {
                throw InvalidOption(description: "--url must be a ws:// or wss:// URL, not '\(value)'")
            }
            self.server = url
        case "--ca-file":
            self.caFiles.append(value)
        case "--agent":
            self.agent = value
        case "--via":
            guard let via = Via(rawValue: value) else {
                throw InvalidOption(description: "--via must be transport or client, not '\(value)'")
            }
            self.via = via
        case "--cases":
            let bounds = value.split(separator: "-", maxSplits: 1).map { Int($0) }
            guard let first = bounds.first ?? nil, let last = bounds.last ?? nil, first >= 1, first <= last else {
                throw InvalidOption(description: "--cases must be N or N-M with 1 <= N <= M, not '\(value)'")
            }
            self.cases = first...last
        default:
            throw InvalidOption(description: "unknown option \(flag)")
        }
    }
}

/// Runs the fuzzingserver's client protocol: `getCaseCount`, `runCase` for each case, `updateReports`.
struct AutobahnTestee {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let options: AutobahnOptions
    let transport = SocketTransport()

    func run() async throws {
        let count = try await self.caseCount()
        let cases = self.options.cases.map { $0.clamped(to: 1...max(1, count)) } ?? 1...count
        log("agent \(self.options.agent) via \(self.options.via.rawValue): cases \(cases) of \(count)")
        for number in cases {
            let compression = try await self.compression(forCase: number)
            let url = self.url("runCase", ["case": "\(number)", "agent": self.options.agent])
            switch self.options.via {
            case .transport: await self.echoOverTransport(url, compression: compression)
            case .client: try await self.echoOverClient(url, compression: compression)
            }
            if number % 50 == 0 { log("  \(number) cases done") }
        }
        // The server writes the reports when this connection closes.
        _ = await self.exchange(self.url("updateReports", ["agent": self.options.agent]))
        log("reports updated for \(self.options.agent)")
    }

    private func caseCount() async throws -> Int {
        let messages = await self.exchange(self.url("getCaseCount", [:]))
        guard case .text(let text)? = messages.first, let count = Int(text), count > 0 else {
            throw Failure(description: "the server at \(self.options.server) sent no case count")
        }
        return count
    }

    /// The permessage-deflate offers case `number` needs, from its id and description (`getCaseInfo`): none for
    /// cases outside 12.* and 13.*; for those, the offers the description lists as the suite's own client's (13.x
    /// vary `server_no_context_takeover` and `server_max_window_bits`; the server's answer varies the client's
    /// side), each with `client_max_window_bits` so that the server may limit our window, or the standard offer
    /// where it lists none (12.x). Threshold 0: every echoed message goes out compressed.
    private func compression(forCase number: Int) async throws -> CompressionOptions? {
        let messages = await self.exchange(self.url("getCaseInfo", ["case": "\(number)"]))
        guard case .text(let text)? = messages.first,
            let info = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let id = info["id"] as? String, let description = info["description"] as? String
        else {
            throw Failure(description: "the server at \(self.options.server) sent no information on case \(number)")
        }
        guard id.hasPrefix("12.") || id.hasPrefix("13.") else { return nil }
        let offers = try Self.offers(inDescription: description)
        return CompressionOptions(offers: offers.isEmpty ? [.standard] : offers, threshold: 0)
    }

    /// The offers in a description's `client offers (requestNoContextTakeover, requestMaxWindowBits): [(True, 9),
    /// (False, 0)]` (window 0: none asked), or none when it has no such list.
    static func offers(inDescription description: String) throws -> [CompressionOptions.Offer] {
        let marker = "client offers (requestNoContextTakeover, requestMaxWindowBits): ["
        guard let start = description.range(of: marker)?.upperBound,
            let end = description[start...].firstIndex(of: "]")
        else { return [] }
        return try description[start..<end].split(separator: ")").compactMap { tuple in
            let fields = tuple.split(whereSeparator: { "(), ".contains($0) })
            guard !fields.isEmpty else { return nil }
            guard fields.count == 2, let bits = Int(fields[1]), fields[0] == "True" || fields[0] == "False" else {
                throw Failure(description: "cannot read the offer '\(tuple))' in the case description")
            }
            return CompressionOptions.Offer(
                serverNoContextTakeover: fields[0] == "True", serverMaxWindowBits: bits == 0 ? nil : bits)
        }
    }

    /// Connects, collects every message until the connection ends, and returns them.
    private func exchange(_ url: URL) async -> [WebSocketMessage] {
        let connection = self.transport.connect(TransportRequest(url: url, tls: self.options.tls))
        var messages: [WebSocketMessage] = []
        for await event in connection.events {
            if case .message(let message) = event { messages.append(message) }
        }
        return messages
    }

    /// One case over the bare transport: echo each message until the connection's one terminal event.
    private func echoOverTransport(_ url: URL, compression: CompressionOptions?) async {
        let connection = self.transport.connect(
            TransportRequest(url: url, tls: self.options.tls, compression: compression))
        for await event in connection.events {
            if case .message(let message) = event {
                // A send after the connection failed throws; the case's outcome is the server's to judge.
                try? await connection.send(message)
            }
        }
    }

    /// One case over the client: echo each message, stop at the session's first close.
    private func echoOverClient(_ url: URL, compression: CompressionOptions?) async throws {
        var configuration = WebSocketConfiguration(
            url: url, heartbeatInterval: .seconds(3600), heartbeatTimeout: .seconds(60), pathMonitoring: .none)
        configuration.transport = self.transport
        configuration.tls = self.options.tls
        configuration.compression = compression
        let client = try WebSocketClient(configuration: configuration)
        let events = client.events
        await client.start()
        for await event in events {
            switch event {
            case .message(let message, _):
                try? await client.send(message)
            case .record(let record) where record.kind == .closed:
                await client.stop()
                return
            case .record, .stateChanged, .roundTrip, .outboxDropped, .unconfirmed, .delivery:
                continue
            }
        }
    }

    private func url(_ path: String, _ query: KeyValuePairs<String, String>) -> URL {
        var components = URLComponents(url: self.options.server, resolvingAgainstBaseURL: false)!
        components.path = "/" + path
        components.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.key, value: $0.value) }
        return components.url!
    }
}

private func log(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
