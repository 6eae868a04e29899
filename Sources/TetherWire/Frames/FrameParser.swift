/// An incremental, resumable frame parser (RFC 6455 §5.2).
///
/// Append bytes as they arrive, in any split (down to one byte at a time), and take frames with
/// `next()` (owned) or `nextFrame()` + `withPayload(of:_:)` (lent, no allocation). A frame is
/// buffered whole before it is returned, so `maximumFrameSize` also bounds the buffer. Headers are
/// validated as soon as their bytes arrive, before the payload is buffered.
struct FrameParser: Sendable {
    /// A frame whose payload is unmasked in the parser's buffer. Valid until the next mutating call.
    struct ParsedFrame: Hashable, Sendable {
        /// The header as received (`maskingKey` is the key the payload was masked with).
        var header: FrameHeader
        fileprivate var payloadStart: Int
    }

    /// The role of this endpoint; see `init(role:maximumFrameSize:reservedBitsAllowed:)`.
    let role: Role
    /// The largest frame payload accepted.
    let maximumFrameSize: Int
    /// The RSV bits that are not rejected.
    let reservedBitsAllowed: UInt8

    private var storage: [UInt8] = []
    /// The largest buffer kept once empty (4 MiB); a larger one, grown by one large frame, is released.
    private static let retainedCapacity = 4 << 20
    private var readIndex = 0
    /// The header of the frame being received, once it is complete.
    private var pendingHeader: FrameHeader?
    private var pendingHeaderSize = 0
    /// How many payload bytes of the pending frame are already unmasked in place (by `unmaskArrivedPayload()`).
    private var pendingUnmaskedCount = 0
    /// The end of the frame last returned by `nextFrame()`; dropped by the next mutating call.
    private var lentEnd: Int?
    /// Frames returned whole by `nextFrame()` so far (control frames and fragments included).
    private(set) var framesCompleted = 0

    /// - Parameters:
    ///   - role: this endpoint's role; a client rejects masked frames, a server unmasked ones.
    ///   - maximumFrameSize: the largest payload accepted in one frame (default 16 MiB); larger is a 1009.
    ///     At least 125, so that every control frame fits.
    ///   - reservedBitsAllowed: RSV bits a negotiated extension allows (`0b100` = RSV1); default none.
    init(role: Role, maximumFrameSize: Int = 16 << 20, reservedBitsAllowed: UInt8 = 0) {
        precondition(maximumFrameSize >= 125, "maximumFrameSize must allow control frames (125 bytes)")
        self.role = role
        self.maximumFrameSize = maximumFrameSize
        self.reservedBitsAllowed = reservedBitsAllowed & 0x7
    }

    /// The number of received bytes not yet returned as frames.
    var bufferedByteCount: Int {
        self.storage.count - (self.lentEnd ?? self.readIndex)
    }

    /// Appends received bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.prepareForAppend()
        bytes.withMemoryRebound(to: UInt8.self) { self.storage.append(contentsOf: $0) }
    }

    /// Appends received bytes.
    mutating func append(_ bytes: some Sequence<UInt8>) {
        self.prepareForAppend()
        self.storage.append(contentsOf: bytes)
    }

    /// Returns the next complete frame with its payload unmasked and owned, or nil when more bytes are needed.
    mutating func next() throws(ProtocolError) -> Frame? {
        guard let frame = try self.nextFrame() else { return nil }
        return Frame(
            fin: frame.header.fin, reservedBits: frame.header.reservedBits, opcode: frame.header.opcode,
            payload: Array(self.storage[frame.payloadStart..<frame.payloadStart + frame.header.payloadLength])
        )
    }

    /// Returns the header of the frame being received as soon as it is complete (the payload may still be
    /// missing), or nil when more header bytes are needed. Validates every header rule.
    mutating func peekHeader() throws(ProtocolError) -> FrameHeader? {
        self.releaseLentFrame()
        if let header = self.pendingHeader { return header }
        guard let (header, size) = try self.parseHeader() else { return nil }
        self.pendingHeader = header
        self.pendingHeaderSize = size
        return header
    }

    /// Returns the next complete frame, its payload unmasked in place in the parser's buffer, or nil when
    /// more bytes are needed. Read the payload with `withPayload(of:_:)` before the next mutating call.
    mutating func nextFrame() throws(ProtocolError) -> ParsedFrame? {
        guard let header = try self.peekHeader() else { return nil }
        let payloadStart = self.readIndex + self.pendingHeaderSize
        guard self.storage.count - payloadStart >= header.payloadLength else { return nil }
        let payloadEnd = payloadStart + header.payloadLength
        self.unmask(header, payloadStart + self.pendingUnmaskedCount..<payloadEnd, offset: self.pendingUnmaskedCount)
        self.pendingHeader = nil
        self.pendingUnmaskedCount = 0
        self.lentEnd = payloadEnd
        self.framesCompleted &+= 1
        return ParsedFrame(header: header, payloadStart: payloadStart)
    }

    /// Unmasks in place the payload bytes of the pending frame (the one `peekHeader()` returned) that have
    /// arrived so far, so that `withArrivedPayload(_:)` can lend them before the frame is complete. Each byte
    /// is unmasked once, however often this is called; `nextFrame()` unmasks only the rest.
    mutating func unmaskArrivedPayload() {
        guard let header = self.pendingHeader else { return }
        let payloadStart = self.readIndex + self.pendingHeaderSize
        let arrived = min(header.payloadLength, self.storage.count - payloadStart)
        guard arrived > self.pendingUnmaskedCount else { return }
        self.unmask(header, payloadStart + self.pendingUnmaskedCount..<payloadStart + arrived,
                    offset: self.pendingUnmaskedCount)
        self.pendingUnmaskedCount = arrived
    }

    /// Lends the payload bytes of the pending frame unmasked so far by `unmaskArrivedPayload()` (empty when no
    /// frame is pending), without copying. Valid until the next mutating call.
    func withArrivedPayload<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let start = self.readIndex + self.pendingHeaderSize
        let count = self.pendingHeader == nil ? 0 : self.pendingUnmaskedCount
        return try self.lend(start..<start + count, body)
    }

    /// Lends the unmasked payload of the frame last returned by `nextFrame()`.
    func withPayload<Result, Failure: Error>(
        of frame: ParsedFrame,
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(
            self.lentEnd == frame.payloadStart + frame.header.payloadLength,
            "withPayload(of:) needs the frame last returned by nextFrame()"
        )
        return try self.lend(frame.payloadStart..<frame.payloadStart + frame.header.payloadLength, body)
    }

    private func lend<Result, Failure: Error>(
        _ range: Range<Int>,
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // `Array.withUnsafeBytes` is untyped `rethrows`; carry the typed error out in a `Swift.Result`.
        let outcome = self.storage.withUnsafeBytes { storage -> Swift.Result<Result, Failure> in
            do throws(Failure) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: storage[range])))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    // MARK: - Buffer

    private mutating func unmask(_ header: FrameHeader, _ range: Range<Int>, offset: Int) {
        guard let key = header.maskingKey, !range.isEmpty else { return }
        self.storage.withUnsafeMutableBytes { storage in
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: storage[range]), offset: offset)
        }
    }

    private mutating func releaseLentFrame() {
        guard let end = self.lentEnd else { return }
        self.lentEnd = nil
        self.readIndex = end
        if self.readIndex == self.storage.count {
            // Keep the buffer for the next frames, unless one very large frame grew it: then give it back.
            self.storage.removeAll(keepingCapacity: self.storage.capacity <= Self.retainedCapacity)
            self.readIndex = 0
        }
    }

    private mutating func prepareForAppend() {
        self.releaseLentFrame()
        // Move the unread bytes to the front once the consumed prefix is at least half the buffer, so that
        // the buffer does not grow without bound and each byte is moved at most a constant number of times.
        if self.readIndex > 0, self.readIndex >= self.storage.count - self.readIndex {
            self.storage.removeSubrange(0..<self.readIndex)
            self.readIndex = 0
        }
    }

    // MARK: - Header

    /// Parses and validates the header at `readIndex`, failing as soon as the bytes present show a violation.
    private func parseHeader() throws(ProtocolError) -> (FrameHeader, Int)? {
        let available = self.storage.count - self.readIndex
        guard available >= 1 else { return nil }
        let result = self.storage.withUnsafeBytes { storage -> Result<(FrameHeader, Int)?, ProtocolError> in
            let bytes = UnsafeRawBufferPointer(rebasing: storage[self.readIndex...])
            do throws(ProtocolError) {
                return .success(try self.parseHeader(bytes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func parseHeader(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> (FrameHeader, Int)? {
        let first = bytes[0]
        let fin = first & 0x80 != 0
        let reservedBits = (first >> 4) & 0x7
        let opcode = Opcode(rawValue: first & 0x0F)
        if reservedBits & ~self.reservedBitsAllowed != 0 {
            throw ProtocolError(.reservedBitsSet(reservedBits))
        }
        guard opcode.isKnown else { throw ProtocolError(.unknownOpcode(opcode.rawValue)) }
        if opcode.isControl, !fin { throw ProtocolError(.fragmentedControlFrame) }
        guard bytes.count >= 2 else { return nil }

        let second = bytes[1]
        let masked = second & 0x80 != 0
        switch (self.role, masked) {
        case (.client, true): throw ProtocolError(.maskedFrameFromServer)
        case (.server, false): throw ProtocolError(.unmaskedFrameFromClient)
        case (.client, false), (.server, true): break
        }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl, shortLength > 125 {
            // The real length may be in the extended field; report the 7-bit marker's meaning.
            throw ProtocolError(.controlFrameTooLong(shortLength))
        }
        var index = 2
        var length: UInt64
        switch shortLength {
        case 126:
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            if length < 126 { throw ProtocolError(.nonMinimalLength) }
            index = 4
        case 127:
            guard bytes.count >= 10 else { return nil }
            length = 0
            for offset in 2..<10 { length = length << 8 | UInt64(bytes[offset]) }
            if length & (1 << 63) != 0 { throw ProtocolError(.lengthTopBitSet) }
            if length <= 0xFFFF { throw ProtocolError(.nonMinimalLength) }
            index = 10
        default:
            length = UInt64(shortLength)
        }
        if length > UInt64(self.maximumFrameSize) {
            throw ProtocolError(.frameTooBig(length: length, limit: self.maximumFrameSize))
        }
        var key: MaskingKey?
        if masked {
            guard bytes.count >= index + 4 else { return nil }
            key = MaskingKey(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3])
            index += 4
        }
        let header = FrameHeader(
            fin: fin, reservedBits: reservedBits, opcode: opcode, maskingKey: key, payloadLength: Int(length))
        return (header, index)
    }
}
