/// An incremental, resumable frame parser (RFC 6455 §5.2).
///
/// Append bytes as they arrive, in any split (down to one byte at a time), and take frames with
/// `next()` (owned) or `nextFrame()` + `withPayload(of:_:)` (lent, no allocation). A frame is
/// buffered whole before it is returned, so `maximumFrameSize` also bounds the buffer. Headers are
/// validated as soon as their bytes arrive, before the payload is buffered.
///
/// A binary message in one frame (not compressed) whose payload is at least `dedicatedPayloadThreshold` bytes, and
/// not whole when its header is read, is received into storage of its own (`PayloadStorage`, allocated at the announced length, which the header check
/// bounds by `maximumFrameSize`): the bytes appended after its header go straight there, and the message's receiver
/// may keep that storage instead of copying the payload out (`lentStorage`).
struct FrameParser: Sendable {
    /// A frame whose payload is unmasked in the parser's buffer. Valid until the next mutating call.
    struct ParsedFrame: Hashable, Sendable {
        /// The header as received (`maskingKey` is the key the payload was masked with).
        var header: FrameHeader
        fileprivate var payloadStart: Int
    }

    /// The role of this endpoint; see `init(role:maximumFrameSize:reservedBitsAllowed:)`.
    let role: Role
    /// The smallest payload received into storage of its own (see the type's documentation).
    let dedicatedPayloadThreshold: Int
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
    /// The pending frame's payload storage of its own (a large frame), and how many of its bytes have arrived; or
    /// the lent frame's, once it is whole.
    private var dedicated: PayloadStorage?
    private var dedicatedCount = 0
    /// Frames returned whole by `nextFrame()` so far (control frames and fragments included).
    private(set) var framesCompleted = 0

    /// - Parameters:
    ///   - role: this endpoint's role; a client rejects masked frames, a server unmasked ones.
    ///   - maximumFrameSize: the largest payload accepted in one frame (default 16 MiB); larger is a 1009.
    ///     At least 125, so that every control frame fits.
    ///   - reservedBitsAllowed: RSV bits a negotiated extension allows (`0b100` = RSV1); default none.
    ///   - dedicatedPayloadThreshold: the smallest payload of a binary message in one frame received into storage of
    ///     its own (default 16 KiB); the fuzzers lower it to exercise that path with small inputs.
    init(
        role: Role, maximumFrameSize: Int = 16 << 20, reservedBitsAllowed: UInt8 = 0,
        dedicatedPayloadThreshold: Int = 16 << 10
    ) {
        precondition(maximumFrameSize >= 125, "maximumFrameSize must allow control frames (125 bytes)")
        self.role = role
        self.dedicatedPayloadThreshold = max(dedicatedPayloadThreshold, 1)
        self.maximumFrameSize = maximumFrameSize
        self.reservedBitsAllowed = reservedBitsAllowed & 0x7
    }

    /// The number of received bytes not yet returned as frames.
    var bufferedByteCount: Int {
        let pendingDedicated = self.lentEnd == nil && self.dedicated != nil ? self.dedicatedCount : 0
        return self.storage.count - (self.lentEnd ?? self.readIndex) + pendingDedicated
    }

    /// Appends received bytes.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.prepareForAppend()
        let rest = self.appendToDedicated(bytes)
        rest.withMemoryRebound(to: UInt8.self) { self.storage.append(contentsOf: $0) }
    }

    /// Appends received bytes.
    mutating func append(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        array.withUnsafeBytes { self.append($0) }
    }

    /// The payload bytes of a large frame whose header is parsed go to its own storage; returns what follows them.
    private mutating func appendToDedicated(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let dedicated = self.dedicated, self.dedicatedCount < dedicated.bytes.count, !bytes.isEmpty else {
            return bytes
        }
        let count = min(bytes.count, dedicated.bytes.count - self.dedicatedCount)
        UnsafeMutableRawBufferPointer(rebasing: dedicated.bytes[self.dedicatedCount..<self.dedicatedCount + count])
            .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        self.dedicatedCount += count
        return UnsafeRawBufferPointer(rebasing: bytes[count...])
    }

    /// Returns the next complete frame with its payload unmasked and owned, or nil when more bytes are needed.
    mutating func next() throws(ProtocolError) -> Frame? {
        guard let frame = try self.nextFrame() else { return nil }
        return Frame(
            fin: frame.header.fin, reservedBits: frame.header.reservedBits, opcode: frame.header.opcode,
            payload: self.withPayload(of: frame) { Array($0) }
        )
    }

    /// The storage of its own the payload of the frame last returned by `nextFrame()` was received into, if it was
    /// (a large frame): a receiver may keep it instead of copying the payload (`PayloadStorage`). Nil otherwise.
    var lentStorage: PayloadStorage? {
        self.lentEnd != nil ? self.dedicated : nil
    }

    /// Returns the header of the frame being received as soon as it is complete (the payload may still be
    /// missing), or nil when more header bytes are needed. Validates every header rule.
    mutating func peekHeader() throws(ProtocolError) -> FrameHeader? {
        self.releaseLentFrame()
        if let header = self.pendingHeader { return header }
        guard let (header, size) = try self.parseHeader() else { return nil }
        self.pendingHeader = header
        self.pendingHeaderSize = size
        self.receiveIntoDedicatedStorage(header)
        return header
    }

    /// A large binary message in one frame whose payload has not all arrived gets storage of its own: what has arrived
    /// moves there (at most one read's worth), the rest will be appended there directly. Only there does it save a
    /// copy: a fragment is copied into the assembled message, text into a string, a compressed payload is inflated.
    private mutating func receiveIntoDedicatedStorage(_ header: FrameHeader) {
        guard header.opcode == .binary, header.fin, header.reservedBits == 0,
              header.payloadLength >= self.dedicatedPayloadThreshold
        else {
            return
        }
        let payloadStart = self.readIndex + self.pendingHeaderSize
        let arrived = self.storage.count - payloadStart
        guard arrived < header.payloadLength else { return }  // whole already: copied out once, as any frame
        let dedicated = PayloadStorage(count: header.payloadLength)
        self.storage.withUnsafeBytes { storage in
            UnsafeMutableRawBufferPointer(rebasing: dedicated.bytes[..<arrived])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[payloadStart...]))
        }
        self.storage.removeLast(arrived)  // the payload was the end of the buffer: the frame is not whole
        self.dedicated = dedicated
        self.dedicatedCount = arrived
    }

    /// Returns the next complete frame, its payload unmasked in place in the parser's buffer, or nil when
    /// more bytes are needed. Read the payload with `withPayload(of:_:)` before the next mutating call.
    mutating func nextFrame() throws(ProtocolError) -> ParsedFrame? {
        guard let header = try self.peekHeader() else { return nil }
        let payloadStart = self.readIndex + self.pendingHeaderSize
        if self.dedicated != nil {
            guard self.dedicatedCount == header.payloadLength else { return nil }
            self.unmask(header, self.pendingUnmaskedCount..<header.payloadLength, offset: self.pendingUnmaskedCount)
            self.lentEnd = payloadStart  // the header's end: the payload is not in the buffer
        } else {
            guard self.storage.count - payloadStart >= header.payloadLength else { return nil }
            let payloadEnd = payloadStart + header.payloadLength
            self.unmask(
                header, payloadStart + self.pendingUnmaskedCount..<payloadEnd, offset: self.pendingUnmaskedCount)
            self.lentEnd = payloadEnd
        }
        self.pendingHeader = nil
        self.pendingUnmaskedCount = 0
        self.framesCompleted &+= 1
        return ParsedFrame(header: header, payloadStart: payloadStart)
    }

    /// Unmasks in place the payload bytes of the pending frame (the one `peekHeader()` returned) that have
    /// arrived so far, so that `withArrivedPayload(_:)` can lend them before the frame is complete. Each byte
    /// is unmasked once, however often this is called; `nextFrame()` unmasks only the rest.
    mutating func unmaskArrivedPayload() {
        guard let header = self.pendingHeader else { return }
        if self.dedicated != nil {
            guard self.dedicatedCount > self.pendingUnmaskedCount else { return }
            self.unmask(header, self.pendingUnmaskedCount..<self.dedicatedCount, offset: self.pendingUnmaskedCount)
            self.pendingUnmaskedCount = self.dedicatedCount
            return
        }
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
        let count = self.pendingHeader == nil ? 0 : self.pendingUnmaskedCount
        if let dedicated = self.dedicated, self.pendingHeader != nil {
            return try body(UnsafeRawBufferPointer(rebasing: dedicated.bytes[..<count]))
        }
        let start = self.readIndex + self.pendingHeaderSize
        return try self.lend(start..<start + count, body)
    }

    /// Lends the unmasked payload of the frame last returned by `nextFrame()`.
    func withPayload<Result, Failure: Error>(
        of frame: ParsedFrame,
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if let dedicated = self.lentStorage {
            precondition(
                self.lentEnd == frame.payloadStart, "withPayload(of:) needs the frame last returned by nextFrame()")
            return try body(UnsafeRawBufferPointer(dedicated.bytes))
        }
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

    /// Unmasks `range` of the pending frame's payload: of the buffer, or of its own storage when it has some (then
    /// `range` counts from the payload's start).
    private mutating func unmask(_ header: FrameHeader, _ range: Range<Int>, offset: Int) {
        guard let key = header.maskingKey, !range.isEmpty else { return }
        if let dedicated = self.dedicated {
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: dedicated.bytes[range]), offset: offset)
            return
        }
        self.storage.withUnsafeMutableBytes { storage in
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: storage[range]), offset: offset)
        }
    }

    private mutating func releaseLentFrame() {
        guard let end = self.lentEnd else { return }
        self.lentEnd = nil
        self.dedicated = nil  // lent whole: its receiver keeps it, or it is freed
        self.dedicatedCount = 0
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
