import CZlib

/// Why a message could not be compressed or inflated.
package enum CompressionError: Error, Equatable, Sendable {
    /// The bytes are not a valid raw DEFLATE stream (the connection closes with 1007).
    case invalidData
    /// Inflated, the message would pass its limit (1009): inflation stopped there.
    case tooLarge(limit: Int)
    /// zlib could not allocate its state (1011).
    case outOfMemory
}

/// The compressing half of `permessage-deflate` for one connection (RFC 7692 §7.2.1): raw DEFLATE through zlib,
/// each message flushed with `Z_SYNC_FLUSH` and its trailing `00 00 ff ff` removed.
///
/// zlib's state (about 2^(windowBits+2) + 2^(memoryLevel+9) bytes: 256 KiB at 15/8) is allocated on the first
/// message, not before, and freed with this object; with no context takeover it is reset after every message.
/// Used by one owner at a time (not `Sendable`).
package final class DeflateCompressor {
    package let windowBits: Int
    package let memoryLevel: Int
    package let noContextTakeover: Bool
    package let level: Int32
    private var zlib: ZlibStream?

    /// - Parameters:
    ///   - windowBits: the LZ77 window, 9...15 (the negotiated `*_max_window_bits` of this side).
    ///   - memoryLevel: zlib's memory level, 1...9 (8 is zlib's default; lower costs less memory and ratio).
    ///   - noContextTakeover: reset the context after each message.
    ///   - level: zlib's compression level, 0...9, or -1 for its default (6).
    package init(windowBits: Int, memoryLevel: Int = 8, noContextTakeover: Bool, level: Int32 = -1) {
        precondition(PerMessageDeflateOffer.windowBitsRange.contains(windowBits), "window bits out of 9...15")
        precondition((1...9).contains(memoryLevel), "memory level out of 1...9")
        self.windowBits = windowBits
        self.memoryLevel = memoryLevel
        self.noContextTakeover = noContextTakeover
        self.level = level
    }

    deinit { self.release() }

    /// Whether zlib's state is allocated (it is from the first message until `release()`).
    package var isAllocated: Bool { self.zlib != nil }

    /// Frees zlib's state (a later message allocates it afresh, with an empty context).
    package func release() {
        self.zlib?.free(deflateEnd)
        self.zlib = nil
    }

    /// Compresses one whole message and appends its payload (without the `00 00 ff ff` tail) to `output`.
    package func compress(_ message: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(CompressionError) {
        let zlib = try self.allocated()
        let (stream, scratch) = (zlib.stream, zlib.scratch)
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: message.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(message.count)
        let start = output.count
        output.reserveCapacity(start + Int(deflateBound(stream, UInt(message.count))) + 8)
        repeat {
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = UInt32(scratch.count)
            _ = deflate(stream, Z_SYNC_FLUSH)
            let produced = scratch.count - Int(stream.pointee.avail_out)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<produced]))
        } while stream.pointee.avail_out == 0
        stream.pointee.next_in = nil
        // A sync flush ends with an empty stored block, 00 00 ff ff, which the receiver appends again (§7.2.1).
        if output.count - start >= 4, output[(output.count - 4)...].elementsEqual([0, 0, 0xFF, 0xFF]) {
            output.removeLast(4)
        }
        // An empty message right after another emits nothing (zlib has nothing new to flush), but the receiver
        // appends 00 00 ff ff all the same, which needs its block header first: send the empty stored block's
        // header byte, 00 (RFC 7692 §7.2.3.6). Found by the inflate fuzz target: the second of two empty messages
        // inflated to garbage.
        if output.count == start { output.append(0) }
        if self.noContextTakeover { deflateReset(stream) }
    }

    private func allocated() throws(CompressionError) -> ZlibStream {
        if let zlib = self.zlib { return zlib }
        let zlib = try ZlibStream {
            tether_deflateInit2($0, self.level, -Int32(self.windowBits), Int32(self.memoryLevel))
        }
        self.zlib = zlib
        return zlib
    }
}

/// The inflating half of `permessage-deflate` for one connection (RFC 7692 §7.2.2): the payload of each message
/// with `00 00 ff ff` appended, inflated as raw DEFLATE in bounded steps.
///
/// Inflation is incremental: `inflate(_:appendingTo:limit:)` writes at most up to `limit` bytes of `output`, so a
/// small payload that inflates to gigabytes stops the moment the message would pass its limit, having cost at
/// most that much memory. zlib's state (about 2^windowBits + 7 KiB) is allocated on the first compressed message
/// and freed with this object; with no context takeover it is reset after every message.
package final class DeflateDecompressor {
    package let windowBits: Int
    package let noContextTakeover: Bool
    private var zlib: ZlibStream?
    /// The stream held a final block: what follows in this message is ignored, and the context restarts.
    private var streamEnded = false
    private static let tail: [UInt8] = [0, 0, 0xFF, 0xFF]

    /// - Parameters:
    ///   - windowBits: the peer's negotiated window, 9...15.
    ///   - noContextTakeover: the peer resets its context after each message, so this side does too.
    package init(windowBits: Int, noContextTakeover: Bool) {
        precondition(PerMessageDeflateOffer.windowBitsRange.contains(windowBits), "window bits out of 9...15")
        self.windowBits = windowBits
        self.noContextTakeover = noContextTakeover
    }

    deinit { self.release() }

    package var isAllocated: Bool { self.zlib != nil }

    /// Frees zlib's state (a later message allocates it afresh, with an empty context).
    package func release() {
        self.zlib?.free(inflateEnd)
        self.zlib = nil
    }

    /// Inflates `input` (compressed payload bytes of the current message) and appends the result to `output`.
    ///
    /// - Returns: the number of input bytes consumed: all of them, unless `output` reached `limit` bytes first, in
    ///   which case the caller either pauses (and passes the rest later) or, when `limit` is the message's
    ///   maximum, treats the message as too large.
    /// - Throws: `invalidData` for bytes that are not raw DEFLATE, `outOfMemory` when zlib cannot start.
    package func inflate(
        _ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8], limit: Int
    ) throws(CompressionError) -> Int {
        guard !self.streamEnded, !input.isEmpty else { return input.count }
        let zlib = try self.allocated()
        let (stream, scratch) = (zlib.stream, zlib.scratch)
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(input.count)
        defer { stream.pointee.next_in = nil }
        while output.count < limit {
            let room = min(scratch.count, limit - output.count)
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = UInt32(room)
            let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
            let produced = room - Int(stream.pointee.avail_out)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<produced]))
            switch status {
            case Z_OK:
                // Output space left over means zlib took all the input it could.
                if stream.pointee.avail_out != 0 { return input.count - Int(stream.pointee.avail_in) }
            case Z_BUF_ERROR:
                // No progress possible: the input is used up (or the message is only its header so far).
                return input.count - Int(stream.pointee.avail_in)
            case Z_STREAM_END:
                self.streamEnded = true
                return input.count
            case Z_MEM_ERROR:
                throw .outOfMemory
            default:
                throw .invalidData
            }
        }
        return input.count - Int(stream.pointee.avail_in)
    }

    /// Inflates `input` as the rest of a message, failing past `maximumSize` bytes of output.
    package func inflate(
        _ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8], maximumSize: Int
    ) throws(CompressionError) {
        let consumed = try self.inflate(input, appendingTo: &output, limit: maximumSize + 1)
        if output.count > maximumSize || consumed < input.count { throw .tooLarge(limit: maximumSize) }
    }

    /// Ends the current message: inflates the `00 00 ff ff` tail the sender removed (which may flush output zlib
    /// still held) and resets the context when it is not taken over.
    package func finishMessage(appendingTo output: inout [UInt8], maximumSize: Int) throws(CompressionError) {
        defer {
            if self.noContextTakeover || self.streamEnded, let zlib = self.zlib {
                inflateReset(zlib.stream)
                self.streamEnded = false
            }
        }
        guard self.zlib != nil, !self.streamEnded else { return }
        // `withUnsafeBytes` rethrows untyped errors, so the typed one is carried out in a Result.
        let result = Self.tail.withUnsafeBytes { tail in
            Result { () throws(CompressionError) in try self.inflate(tail, appendingTo: &output, maximumSize: maximumSize) }
        }
        try result.get()
    }

    private func allocated() throws(CompressionError) -> ZlibStream {
        if let zlib = self.zlib { return zlib }
        let zlib = try ZlibStream { tether_inflateInit2($0, -Int32(self.windowBits)) }
        self.zlib = zlib
        return zlib
    }
}

/// One zlib stream and the buffer zlib writes into, one step at a time, before the bytes are appended to a
/// message. The stream lives at a fixed address: zlib's state points back at it.
private struct ZlibStream {
    let stream: UnsafeMutablePointer<z_stream>
    let scratch: UnsafeMutableBufferPointer<UInt8>
    static let step = 16 << 10

    /// Allocates a stream and starts it with `start` (`deflateInit2` or `inflateInit2`).
    init(_ start: (UnsafeMutablePointer<z_stream>) -> Int32) throws(CompressionError) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard start(stream) == Z_OK else {
            stream.deallocate()
            throw .outOfMemory
        }
        self.stream = stream
        self.scratch = .allocate(capacity: Self.step)
    }

    /// Ends the stream with `end` (`deflateEnd` or `inflateEnd`) and frees both buffers.
    func free(_ end: (UnsafeMutablePointer<z_stream>) -> Int32) {
        _ = end(self.stream)
        self.stream.deallocate()
        self.scratch.deallocate()
    }
}
