/// Bytes in, messages out: a `FrameParser` and a `MessageAssembler` in one, for one role.
///
/// Append bytes in any split; `next()` returns owned messages, `nextMessage(_:)` lends them without
/// copying (no allocation per message for frames that fit the buffer). Messages received before a
/// violation are all delivered first; once a `ProtocolError` is thrown, every later call throws it again.
/// After a close frame is returned, further bytes are discarded (the peer may send nothing after it).
public struct WebSocketDecoder: Sendable {
    /// The frame parser (read-only access, for its limits and buffered byte count).
    private(set) var parser: FrameParser
    /// The message assembler (read-only access).
    private(set) var assembler: MessageAssembler
    private var failure: ProtocolError?
    /// A close frame was returned.
    public private(set) var isClosed = false
    /// Where the message last lent by `nextMessage(_:)` still is, until the next mutating call.
    private var lastLent = LastLent.none

    private enum LastLent {
        case none
        case frame(FrameParser.ParsedFrame, Opcode)
        case assembled(Opcode, reservedBits: UInt8)
    }

    /// - Parameters:
    ///   - role: this endpoint's role (a client expects unmasked frames, a server masked ones).
    ///   - maximumFrameSize: the largest frame payload accepted (default 16 MiB); beyond is a 1009.
    ///   - maximumMessageSize: the largest message accepted (default 16 MiB); beyond is a 1009.
    ///   - reservedBitsAllowed: RSV bits a negotiated extension allows (`0b100` = RSV1); default none. The bits are
    ///     passed through in `BorrowedMessage.reservedBits`, on a message's first frame only (elsewhere they are a
    ///     1002); a text message that carries them is not validated (the extension validates what it restores).
    ///   - maximumTransformedMessageSize: the largest message accepted as received when the extension transformed
    ///     it (reserved bits on its first frame), which the extension bounds again once restored; default
    ///     `maximumMessageSize`. For permessage-deflate, room for what compression adds to data that does not
    ///     compress (`WebSocketCompression.largestCompressedSize(ofMessage:)`).
    public init(
        role: Role,
        maximumFrameSize: Int = 16 << 20,
        maximumMessageSize: Int = 16 << 20,
        reservedBitsAllowed: UInt8 = 0,
        maximumTransformedMessageSize: Int? = nil
    ) {
        self.init(
            role: role, maximumFrameSize: maximumFrameSize, maximumMessageSize: maximumMessageSize,
            reservedBitsAllowed: reservedBitsAllowed, maximumTransformedMessageSize: maximumTransformedMessageSize,
            dedicatedPayloadThreshold: 16 << 10)
    }

    /// As `init(role:maximumFrameSize:maximumMessageSize:reservedBitsAllowed:maximumTransformedMessageSize:)`, with
    /// the smallest payload of a binary message in one frame received into storage of its own
    /// (`BorrowedMessage.storage`): 16 KiB there; tests and the fuzzers lower it to exercise that path with small
    /// inputs.
    package init(
        role: Role, maximumFrameSize: Int, maximumMessageSize: Int, reservedBitsAllowed: UInt8,
        maximumTransformedMessageSize: Int? = nil, dedicatedPayloadThreshold: Int
    ) {
        self.parser = FrameParser(
            role: role, maximumFrameSize: maximumFrameSize, reservedBitsAllowed: reservedBitsAllowed,
            dedicatedPayloadThreshold: dedicatedPayloadThreshold)
        self.assembler = MessageAssembler(
            maximumMessageSize: maximumMessageSize, maximumTransformedSize: maximumTransformedMessageSize)
    }

    /// Bytes received and not yet returned as messages: the parser's buffer and the fragments being assembled.
    public var bufferedByteCount: Int { self.parser.bufferedByteCount + self.assembler.bufferedByteCount }

    /// Frames decoded whole so far (control frames and the fragments of a message included).
    package var framesCompleted: Int { self.parser.framesCompleted }

    /// Whether part of a frame has arrived and the rest has not (or, while messages wait to be taken, whether any
    /// bytes wait): read after every complete frame was taken, a frame is in progress.
    package var hasBufferedFrameBytes: Bool { self.parser.bufferedByteCount > 0 }

    /// The role this decoder reads for.
    public var role: Role { self.parser.role }

    /// Appends received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.lastLent = .none
        guard !self.isClosed, self.failure == nil else { return }
        self.parser.append(bytes)
    }

    /// Appends received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        self.lastLent = .none
        guard !self.isClosed, self.failure == nil else { return }
        self.parser.append(bytes)
    }

    /// Lends the message `nextMessage(_:)` returned last once more, without copying, until the next mutating call
    /// (for example to echo it after its handler has returned); nil when there is none.
    public func withLastMessage<Result>(_ body: (BorrowedMessage) -> Result) -> Result? {
        switch self.lastLent {
        case .none:
            return nil
        case .frame(let frame, let opcode):
            return self.parser.withPayload(of: frame) {
                body(BorrowedMessage(
                    opcode: opcode, payload: $0, reservedBits: frame.header.reservedBits,
                    storage: self.parser.lentStorage))
            }
        case .assembled(let opcode, let reservedBits):
            return self.assembler.withAssembledPayload {
                body(BorrowedMessage(opcode: opcode, payload: $0, reservedBits: reservedBits))
            }
        }
    }

    /// Returns the next complete message, owned, or nil when more bytes are needed (for the tests).
    mutating func next() throws(ProtocolError) -> WireMessage? {
        try self.nextMessage { $0.message }
    }

    /// Lends the next complete message to `body` without copying it and returns `body`'s result, or returns
    /// nil when more bytes are needed. The payload is valid only inside `body`.
    @inlinable
    public mutating func nextMessage<Result>(_ body: (BorrowedMessage) -> Result) throws(ProtocolError) -> Result? {
        // Inlinable so that the caller's module specialises it; the work happens in the non-generic
        // `lendNextMessage`, which avoids generic metadata lookups per message.
        var result: Result?
        _ = try self.lendNextMessage { result = body($0) }
        return result
    }

    /// Calls `body` with the next complete message and returns true, or returns false when more bytes are needed.
    @usableFromInline
    mutating func lendNextMessage(_ body: (BorrowedMessage) -> Void) throws(ProtocolError) -> Bool {
        self.lastLent = .none
        if let failure = self.failure { throw failure }
        guard !self.isClosed else { return false }
        do throws(ProtocolError) {
            while true {
                guard let header = try self.parser.peekHeader() else { return false }
                try self.assembler.validate(header)
                guard let frame = try self.parser.nextFrame() else {
                    try self.validateArrivedPayload(of: header)
                    return false
                }
                let assembly = try self.consume(frame)
                switch assembly {
                case .incomplete:
                    continue
                case .frame(let opcode):
                    if opcode == .close { self.isClosed = true }
                    self.lastLent = .frame(frame, opcode)
                case .assembled(let opcode):
                    self.lastLent = .assembled(opcode, reservedBits: self.assembler.messageReservedBits)
                }
                _ = self.withLastMessage(body)
                return true
            }
        } catch {
            self.failure = error
            throw error
        }
    }

    /// Checks the text of a frame that is still arriving, so that invalid UTF-8 fails at its first byte.
    private mutating func validateArrivedPayload(of header: FrameHeader) throws(ProtocolError) {
        guard header.opcode == .text || header.opcode == .continuation else { return }
        self.parser.unmaskArrivedPayload()
        try self.parser.withArrivedPayload { (prefix) throws(ProtocolError) in
            try self.assembler.validateArrived(header, payload: prefix)
        }
    }

    private mutating func consume(
        _ frame: FrameParser.ParsedFrame
    ) throws(ProtocolError) -> MessageAssembler.Assembly {
        // The parser lends the payload while the assembler is mutated: two different stored properties.
        try self.parser.withPayload(of: frame) { (payload) throws(ProtocolError) -> MessageAssembler.Assembly in
            try self.assembler.consume(frame.header, payload: payload)
        }
    }
}
