// Wire codec benchmarks: `swift run -c release tether-bench wire`.
// Prints `name value` lines; GB/s are 10^9 bytes per second of payload.
// `tether-bench wire decode64 COUNT` runs only the 64-byte-frame decode loop over COUNT frames (used to check,
// with a malloc-counting preload, that the number of allocations does not grow with the number of frames).
import Foundation
import TetherWire

enum WireBench {
    static func run(_ arguments: [String]) {
        if arguments.first == "decode64" {
            let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 1_000_000
            let (frames, seconds) = self.decode64ByteFrames(count: count)
            print("wire.decode_64b_frames_per_s \(self.format(Double(frames) / seconds))")
            return
        }
        print("wire.unmask_16k_gbps \(self.format(self.unmask(size: 16 << 10, totalBytes: 8 << 30)))")
        print("wire.unmask_64m_gbps \(self.format(self.unmask(size: 64 << 20, totalBytes: 4 << 30)))")
        print("wire.memcpy_64m_gbps \(self.format(self.memcpy64m(totalBytes: 4 << 30)))")
        print("wire.bytewise_unmask_16k_gbps \(self.format(self.bytewiseUnmask16k(totalBytes: 256 << 20)))")
        let (frames, seconds) = self.decode64ByteFrames(count: 4_000_000)
        print("wire.decode_64b_frames_per_s \(self.format(Double(frames) / seconds))")
        print("wire.decode_1m_gbps \(self.format(self.decode1m(totalBytes: 2 << 30)))")
        print("wire.encode_1m_gbps \(self.format(self.encode1m(totalBytes: 2 << 30)))")
    }

    static func format(_ value: Double) -> String {
        value >= 1000 ? String(Int(value.rounded())) : String(Double(Int(value * 100)) / 100)
    }

    /// Runs `body` and returns the elapsed seconds.
    static func time(_ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        let elapsed = clock.measure(body)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func gigabytesPerSecond(_ bytes: Int, _ seconds: Double) -> Double {
        Double(bytes) / seconds / 1e9
    }

    /// Prevents the optimiser from discarding results.
    @inline(never)
    static func consume(_ value: Int) {
        if value == 0x7FFF_FFFF_1234 { print("") }
    }

    static func unmask(size: Int, totalBytes: Int) -> Double {
        var buffer = [UInt8](repeating: 0x5A, count: size)
        let key = MaskingKey(value: 0x37FA_213D)
        let rounds = max(1, totalBytes / size)
        buffer.withUnsafeMutableBytes { key.apply(to: $0) }  // warm up, fault pages in
        let seconds = self.time {
            buffer.withUnsafeMutableBytes { bytes in
                for _ in 0..<rounds { key.apply(to: bytes) }
            }
        }
        self.consume(Int(buffer[size / 2]))
        return self.gigabytesPerSecond(rounds * size, seconds)
    }

    static func memcpy64m(totalBytes: Int) -> Double {
        let size = 64 << 20
        let source = [UInt8](repeating: 0x5A, count: size)
        var destination = [UInt8](repeating: 0, count: size)
        let rounds = max(1, totalBytes / size)
        let seconds = self.time {
            source.withUnsafeBytes { from in
                destination.withUnsafeMutableBytes { to in
                    for _ in 0..<rounds { memcpy(to.baseAddress!, from.baseAddress!, size) }
                }
            }
        }
        self.consume(Int(destination[size / 2]))
        return self.gigabytesPerSecond(rounds * size, seconds)
    }

    /// The common Swift style: one byte at a time with `% 4`, through array subscripts.
    @inline(never)
    static func bytewiseUnmask(_ buffer: inout [UInt8], key: [UInt8]) {
        for index in 0..<buffer.count {
            buffer[index] ^= key[index % 4]
        }
    }

    static func bytewiseUnmask16k(totalBytes: Int) -> Double {
        let size = 16 << 10
        var buffer = [UInt8](repeating: 0x5A, count: size)
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        let rounds = max(1, totalBytes / size)
        let seconds = self.time {
            for _ in 0..<rounds { self.bytewiseUnmask(&buffer, key: key) }
        }
        self.consume(Int(buffer[size / 2]))
        return self.gigabytesPerSecond(rounds * size, seconds)
    }

    /// Masked 64-byte text frames (client to server) fed in 64 KiB reads, parsed, unmasked, validated as UTF-8
    /// and delivered as messages through the lending API. Returns (frames, seconds).
    static func decode64ByteFrames(count: Int) -> (Int, Double) {
        var encoder = WebSocketEncoder(role: .client, random: SystemRandomNumberGenerator())
        let payload = Array("The quick brown fox jumps over the lazy dog, 64 bytes of text!!!".utf8)
        precondition(payload.count == 64)
        // One block of frames that fills one read, replayed: the input is not what is measured.
        var block: [UInt8] = []
        let framesPerBlock = (64 << 10) / 70
        for _ in 0..<framesPerBlock { encoder.encode(.text, payload: payload, into: &block) }
        let blocks = max(1, count / framesPerBlock)
        var decoder = WebSocketDecoder(role: .server)
        var received = 0
        var bytes = 0
        let seconds = self.time {
            block.withUnsafeBytes { read in
                for _ in 0..<blocks {
                    decoder.append(read)
                    while let length = try! decoder.nextMessage({ $0.payload.count }) {
                        received &+= 1
                        bytes &+= length
                    }
                }
            }
        }
        precondition(received == blocks * framesPerBlock && bytes == received * 64, "lost frames")
        return (received, seconds)
    }

    /// 1 MiB masked binary messages fed in 64 KiB reads.
    static func decode1m(totalBytes: Int) -> Double {
        let size = 1 << 20
        var encoder = WebSocketEncoder(role: .client, random: SystemRandomNumberGenerator())
        var wire: [UInt8] = []
        encoder.encode(.binary, payload: [UInt8](repeating: 0x42, count: size), into: &wire)
        let rounds = max(1, totalBytes / size)
        var decoder = WebSocketDecoder(role: .server)
        var received = 0
        let seconds = self.time {
            wire.withUnsafeBytes { wire in
                for _ in 0..<rounds {
                    var start = 0
                    while start < wire.count {
                        let end = min(wire.count, start + (64 << 10))
                        decoder.append(UnsafeRawBufferPointer(rebasing: wire[start..<end]))
                        while let length = try! decoder.nextMessage({ $0.payload.count }) { received &+= length }
                        start = end
                    }
                }
            }
        }
        precondition(received == rounds * size, "lost bytes")
        return self.gigabytesPerSecond(received, seconds)
    }

    /// 1 MiB binary messages encoded and masked by a client into a reused buffer.
    static func encode1m(totalBytes: Int) -> Double {
        let size = 1 << 20
        let payload = [UInt8](repeating: 0x42, count: size)
        var encoder = WebSocketEncoder(role: .client, random: SystemRandomNumberGenerator())
        var buffer: [UInt8] = []
        buffer.reserveCapacity(size + 14)
        let rounds = max(1, totalBytes / size)
        var written = 0
        let seconds = self.time {
            for _ in 0..<rounds {
                buffer.removeAll(keepingCapacity: true)
                encoder.encode(.binary, payload: payload, into: &buffer)
                written &+= buffer.count
            }
        }
        self.consume(written)
        return self.gigabytesPerSecond(rounds * size, seconds)
    }
}
