// permessage-deflate benchmarks: `swift run -c release tether-bench deflate`.
// Prints `name value` lines: compression and inflation throughput (MB/s, 10^6 bytes of uncompressed payload per
// second) and the ratio (compressed / uncompressed) on a JSON-like corpus generated here, per message size, with and
// without context takeover, through the codec the engine uses.
import TetherCore
import TetherWire

enum DeflateBench {
    static func run(_ arguments: [String]) {
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
