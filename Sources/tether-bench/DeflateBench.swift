// permessage-deflate benchmarks: `swift run -c release tether-bench deflate [--seconds S] [--connections N]`.
// Prints `name value` lines:
//   deflate.SIZE.takeover|no_takeover.compress_mbps, .inflate_mbps, .ratio
//                          compression and inflation throughput (MB/s, 10^6 bytes of uncompressed payload per second)
//                          and the ratio (compressed / uncompressed) on a JSON-like corpus generated here, per message
//                          size, with and without context takeover, through the codec the engine uses
//   deflate.echo.rtt_1k_plain_per_s, deflate.echo.rtt_1k_per_s
//                          sequential round trips of a 1 KiB JSON-like text through `WebSocketClient` and the
//                          embedded echo server (`TestServer`, in this process), plain and with permessage-deflate
//                          (defaults both ways), measured alternately in the same run (best of the rounds each)
//   deflate.echo.mbps_1m_plain, deflate.echo.mbps_1m
//                          1 MiB JSON-like binary messages echoed one at a time; payload MB/s one way, likewise
//   deflate.memory.plain|default|small.rss_kib_per_conn
//                          resident memory per idle connection: N clients (default 200) in a child process each
//                          exchange one 1 KiB message compressed both ways (so that both zlib contexts exist, as on
//                          any connection that has carried a compressed message) with an echo server in another
//                          child process, then idle; (RSS after − RSS before) / N. `plain` offers no compression,
//                          `default` is `CompressionOptions.standard` (window 15, memory level 8), `small` offers
//                          9-bit windows without context takeover both ways at memory level 1. Each figure comes from
//                          a fresh process (freed memory from another figure cannot hide a cost), the three kinds
//                          alternated over two rounds, best (lowest) of each
#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer
import TetherWire

enum DeflateBench {
    static func run(_ arguments: [String]) async {
        var seconds = 2.0
        var connections = 200
        var memoryKind: String?
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch (arguments[index], value) {
            case ("--seconds", let text?) where Double(text).map({ $0 > 0 }) == true: seconds = Double(text)!
            case ("--connections", let text?) where Int(text).map({ $0 > 0 }) == true: connections = Int(text)!
            case ("--memory-child", let kind?) where Self.memoryKinds.contains(kind): memoryKind = kind
            default:
                EchoBench.progress("usage: tether-bench deflate [--seconds S] [--connections N]")
                exit(2)
            }
            index += 2
        }
        do {
            if let memoryKind {
                return try await self.measureMemory(memoryKind, connections: connections)
            }
            self.codec()
            try await self.echo(seconds: seconds)
            try self.memory(connections: connections)
        } catch {
            EchoBench.progress("tether-bench deflate: \(error)")
            exit(1)
        }
    }

    /// Compression and inflation through the codec, per message size and context takeover.
    static func codec() {
        for size in [256, 1 << 10, 16 << 10, 1 << 20] {
            let messages = self.corpus(messageSize: size, totalBytes: 64 << 20)
            for takeover in [true, false] {
                let name = "deflate.\(self.label(size)).\(takeover ? "takeover" : "no_takeover")"
                let (compressed, compressSeconds) = self.compress(messages, takeover: takeover)
                let inflateSeconds = self.inflate(compressed, takeover: takeover)
                let plainBytes = messages.reduce(0) { $0 + $1.count }
                let compressedBytes = compressed.reduce(0) { $0 + $1.count }
                print("\(name).compress_mbps \(WireBench.format(Double(plainBytes) / compressSeconds / 1e6))")
                print("\(name).inflate_mbps \(WireBench.format(Double(plainBytes) / inflateSeconds / 1e6))")
                print("\(name).ratio \(WireBench.format(Double(compressedBytes) / Double(plainBytes)))")
            }
        }
    }

    // MARK: - Echo, plain beside compressed

    static func echo(seconds: Double) async throws {
        let plainServer = try TestServer(configuration: .init(recordLimit: 0), scenario: .echo)
        let deflateServer = try TestServer(configuration: .init(recordLimit: 0), scenario: Scenario.echo.deflating())
        let small = WebSocketMessage.text(String(decoding: self.corpus(messageSize: 1 << 10, totalBytes: 1 << 10)[0],
                                                 as: UTF8.self))
        let large = WebSocketMessage.binary(Data(self.corpus(messageSize: 1 << 20, totalBytes: 1 << 20)[0]))
        var plain = try await ClientEndpoint.open(url: URL(string: plainServer.url(path: "/echo"))!)
        var compressed = try await ClientEndpoint.open(
            url: URL(string: deflateServer.url(path: "/echo"))!, compression: .standard)
        var best: [String: Double] = [:]
        func keep(_ name: String, _ value: Double) { best[name] = max(best[name] ?? 0, value) }
        for _ in 0..<2 {  // alternated, so that a change in the machine's load touches both alike
            keep("rtt_1k_plain_per_s", try await EchoBench.roundTrips(&plain, small, seconds: seconds))
            keep("rtt_1k_per_s", try await EchoBench.roundTrips(&compressed, small, seconds: seconds))
            keep("mbps_1m_plain", try await EchoBench.throughput(&plain, large, seconds: seconds))
            keep("mbps_1m", try await EchoBench.throughput(&compressed, large, seconds: seconds))
        }
        await plain.close()
        await compressed.close()
        await plainServer.stop()
        await deflateServer.stop()
        for name in ["rtt_1k_plain_per_s", "rtt_1k_per_s", "mbps_1m_plain", "mbps_1m"] {
            print("deflate.echo.\(name) \(WireBench.format(best[name] ?? 0))")
        }
    }

    // MARK: - Memory per idle connection

    static let memoryKinds = ["plain", "default", "small"]

    static func compression(_ kind: String) -> CompressionOptions? {
        switch kind {
        case "default":
            return .standard
        case "small":
            let offer = CompressionOptions.Offer(
                serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 9,
                clientMaxWindowBits: .limit(9))
            return CompressionOptions(offers: [offer], memoryLevel: 1)
        default:
            return nil
        }
    }

    /// Runs each kind in a child process of its own (`--memory-child KIND`), alternated over two rounds, and prints
    /// the lowest figure of each.
    static func memory(connections: Int) throws {
        var best: [String: Double] = [:]
        for _ in 0..<2 {
            for kind in self.memoryKinds {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                process.arguments = ["deflate", "--memory-child", kind, "--connections", "\(connections)"]
                let output = Pipe()
                process.standardOutput = output
                try process.run()
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                let fields = text.split(whereSeparator: \.isWhitespace)
                guard process.terminationStatus == 0, fields.count == 2, let value = Double(fields[1]) else {
                    throw EchoBench.Failure("the memory child for \(kind) failed: \(text)")
                }
                best[kind] = min(best[kind] ?? .infinity, value)
            }
        }
        for kind in self.memoryKinds {
            print("deflate.memory.\(kind).rss_kib_per_conn \(WireBench.format(best[kind] ?? 0))")
        }
    }

    /// In a child process: `connections` clients of `kind` each exchange one compressed message with an echo server
    /// in another child process, then idle; prints (RSS after − RSS before) / connections in KiB.
    static func measureMemory(_ kind: String, connections: Int) async throws {
        IdleBench.raiseDescriptorLimit(to: connections + 256)
        let server = try IdleBench.ServerProcess(deflate: true)
        defer { server.stop() }
        let message = WebSocketMessage.text(String(
            decoding: self.corpus(messageSize: 1 << 10, totalBytes: 1 << 10)[0], as: UTF8.self))
        let compression = self.compression(kind)
        // One connection first, so that one-time costs (threads, runtime metadata, zlib's code) are not counted.
        var warmUp = try await ClientEndpoint.open(url: server.url, compression: compression)
        try await EchoBench.roundTrip(&warmUp, message)
        await warmUp.close()
        let before = IdleBench.residentKiB()
        var endpoints: [ClientEndpoint] = []
        endpoints.reserveCapacity(connections)
        for _ in 0..<connections {
            var endpoint = try await ClientEndpoint.open(url: server.url, compression: compression)
            try await endpoint.client.send(message, compression: .always)  // compressed both ways when negotiated
            let echoed = try await endpoint.receive()
            guard echoed.byteCount == message.byteCount else { throw EchoBench.Failure("not an echo") }
            endpoints.append(endpoint)
        }
        let after = IdleBench.residentKiB()
        EchoBench.progress("deflate: \(kind): \(connections) connections, RSS \(before) → \(after) KiB")
        print("deflate.memory.\(kind).rss_kib_per_conn \(WireBench.format(Double(after - before) / Double(connections)))")
        for endpoint in endpoints { await endpoint.close() }
    }

    static func label(_ size: Int) -> String {
        size >= 1 << 20 ? "\(size >> 20)m" : size >= 1 << 10 ? "\(size >> 10)k" : "\(size)b"
    }

    /// Messages of `messageSize` bytes of JSON records (ids, symbols, prices, sides) from a fixed seed, about
    /// `totalBytes` in all.
    static func corpus(messageSize: Int, totalBytes: Int) -> [[UInt8]] {
        var random = SplitMix64(seed: 0x7E7E)
        let symbols = ["TTHR", "ABCD", "WXYZ", "QRST", "LMNO"]
        let sides = ["buy", "sell"]
        var messages: [[UInt8]] = []
        for _ in 0..<max(1, totalBytes / messageSize) {
            var message = "["
            while message.utf8.count < messageSize {
                let id = random.next() % 1_000_000
                let symbol = symbols[Int(random.next() % 5)]
                let price = Double(random.next() % 100_000) / 100
                let side = sides[Int(random.next() % 2)]
                message += #"{"id":\#(id),"symbol":"\#(symbol)","price":\#(price),"side":"\#(side)"},"#
            }
            messages.append(Array(message.utf8.prefix(messageSize)))
        }
        return messages
    }

    static func compress(_ messages: [[UInt8]], takeover: Bool) -> ([[UInt8]], Double) {
        let compressor = DeflateCompressor(windowBits: 15, noContextTakeover: !takeover)
        var compressed: [[UInt8]] = []
        compressed.reserveCapacity(messages.count)
        let seconds = WireBench.time {
            for message in messages {
                var output: [UInt8] = []
                message.withUnsafeBytes { bytes in
                    do throws(CompressionError) { try compressor.compress(bytes, appendingTo: &output) } catch {
                        fatalError("compression failed: \(error)")
                    }
                }
                compressed.append(output)
            }
        }
        return (compressed, seconds)
    }

    static func inflate(_ compressed: [[UInt8]], takeover: Bool) -> Double {
        let decompressor = DeflateDecompressor(windowBits: 15, noContextTakeover: !takeover)
        var inflated: [UInt8] = []
        var total = 0
        let seconds = WireBench.time {
            for message in compressed {
                inflated.removeAll(keepingCapacity: true)
                message.withUnsafeBytes { bytes in
                    do throws(CompressionError) {
                        try decompressor.inflate(bytes, appendingTo: &inflated, maximumSize: 16 << 20)
                        try decompressor.finishMessage(appendingTo: &inflated, maximumSize: 16 << 20)
                    } catch {
                        fatalError("inflation failed: \(error)")
                    }
                }
                total += inflated.count
            }
        }
        WireBench.consume(total)
        return seconds
    }
}
#endif
