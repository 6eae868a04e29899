#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer
import TetherWire

/// The permessage-deflate scenarios (docs/compression.md): what compression saves on the wire for JSON-like messages,
/// and a decompression bomb that ends in a 1009 with the process's memory bounded.
extension CheckScenarios {
    // MARK: Compression

    /// The client offers permessage-deflate to an echo server that accepts; it sends JSON-like messages and reads
    /// the echoes. The kernel's byte counters of the client's socket give what crossed the wire each way.
    static func compression(_ run: ScenarioRun) async throws(CheckFailure) {
        let count = 200
        let server = try run.server(Scenario.echo.deflating())
        // The pong deadline is not what this scenario checks (as in the receive loop's).
        let (client, recorder) = try run.client(url: server.url(path: "/deflate"), heartbeatTimeout: 2_000) {
            $0.compression = .standard
        }
        await client.start()
        try await run.wait(recorder, "the open") { $0.records.first(.opened) != nil }
        guard let socket = TCPCounters.descriptor(remotePort: server.port), let before = TCPCounters.of(socket) else {
            throw .setup("the client's socket to port \(server.port) or its TCP counters")
        }
        let messages = (0..<count).map(Self.quote)
        for message in messages {
            do {
                try await client.send(.text(message))
            } catch {
                throw .setup("send: \(error)")
            }
        }
        let snapshot = try await run.wait(recorder, "\(count) echoes") { $0.messages.count >= count }
        let after = TCPCounters.of(socket)
        let payload = messages.reduce(0) { $0 + $1.utf8.count }
        let written = (after?.written ?? 0) - before.written
        let read = (after?.read ?? 0) - before.read
        let echoed = snapshot.messages.compactMap { message -> String? in
            if case .text(let text) = message { return text }
            return nil
        }
        let agreement = server.connection(1)?.compression
        run.expect(agreement != nil, "permessage-deflate agreed",
                   agreement.map { "server window \($0.serverMaxWindowBits), client window \($0.clientMaxWindowBits)" }
                       ?? "no agreement")
        run.expect(echoed == messages, "every echo whole and in order",
                   "\(echoed.count) of \(count), \(zip(echoed, messages).prefix { $0 == $1 }.count) identical")
        let sentRatio = Double(written) / Double(payload)
        let receivedRatio = Double(read) / Double(payload)
        run.expect(after != nil && sentRatio < 0.5 && receivedRatio < 0.5,
                   "both directions compressed to under half (wire bytes, headers and pings included)",
                   "\(byteCountText(payload)) of messages each way: \(byteCountText(written)) written, "
                       + "\(byteCountText(read)) read")
        run.expect(snapshot.records.of(.closed).isEmpty, "no close", "\(snapshot.records.of(.closed).count) closes")
        run.note("messages", "\(echoed.count)/\(count)")
        run.note("payload", byteCountText(payload))
        run.note("ratio_sent", String(format: "%.3f", sentRatio))
        run.note("ratio_received", String(format: "%.3f", receivedRatio))
        _ = client
    }

    /// Message `number` of the compression scenario: a JSON array of quotes (about 1 KiB) whose numbers vary.
    static func quote(_ number: Int) -> String {
        let entries = (0..<12).map { index in
            let id = number * 12 + index
            let price = 100 + (id * 31) % 997
            return #"{"id":\#(id),"symbol":"SYM\#(index)","price":\#(price).\#(id % 100),"#
                + #""size":\#((id * 17) % 500),"side":"\#(id.isMultiple(of: 2) ? "buy" : "sell")"}"#
        }
        return "[" + entries.joined(separator: ",") + "]"
    }

    // MARK: Deflate bomb

    /// The server sends one compressed message of about 1 MB that inflates to 1 GiB of zeros (`DeflateBomb`). The
    /// client inflates no further than its maximum message size (4 MiB here), closes with 1009, and delivers
    /// nothing; the process's resident memory grows by far less than the gibibyte.
    static func deflateBomb(_ run: ScenarioRun) async throws(CheckFailure) {
        let inflatedMebibytes = 1024
        let limit = 4 << 20
        let wire = DeflateBomb.payload(inflatedMebibytes: inflatedMebibytes).count  // the size the server sends
        let server = try run.server(Scenario.normal.sendingDeflateBomb(inflatedMebibytes: inflatedMebibytes))
        let memory = try run.residentMemory()
        // The heartbeat pings at the scenarios' interval: a ping still unanswered when the client closes for the
        // 1009 (its pong waits behind the bomb) is overtaken by that close, never reported failed, so the record says
        // 1009. The pong timeout is generous: on a loaded machine reading the bomb can take longer than 100 ms.
        let (client, recorder) = try run.client(url: server.url(path: "/bomb")) { configuration in
            configuration.heartbeatTimeout = .seconds(10)
            configuration.compression = .standard
            configuration.maximumMessageSize = limit
        }
        await client.start()
        let records = try await run.wait(recorder, "the close") { $0.records.first(.closed) != nil }.records
        let growth = memory.peakGrowth
        let opened = records.first(.opened)
        let close = records.first(.closed)
        run.expect(close?.reason == .protocolViolation(code: 1009) && close?.code == 1009,
                   "closed with 1009 (message too big) as inflation passed the limit",
                   "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        run.expect(records.of(.message).isEmpty, "nothing delivered", "\(records.of(.message).count) messages")
        let closeFrame = try await run.wait(server, "the client's close frame") {
            $0.first?.closeReceived != nil
        }.first?.closeReceived?.code
        run.expect(closeFrame == 1009, "the server received close 1009", "\(closeFrame.map(String.init) ?? "none")")
        let memoryLimit = run.timing.residentGrowthLimit
        run.expect(growth < memoryLimit, "resident memory grew by far less than the message would inflate to",
                   "peak growth \(byteCountText(growth)), limit \(byteCountText(memoryLimit)); "
                       + "\(byteCountText(wire)) on the wire inflating to \(inflatedMebibytes) MiB")
        let elapsed = close.flatMap { close in opened.map { close.time - $0.time } }
        run.note("wire", byteCountText(wire))
        run.note("inflates_to", "\(inflatedMebibytes) MiB")
        run.note("inflated_limit", byteCountText(limit))
        run.note("code", String(close?.code ?? 0))
        run.note("close_after_open", "\(elapsed ?? -1)ms")
        run.note("rss_growth", byteCountText(growth))
        _ = client
    }
}
#endif
