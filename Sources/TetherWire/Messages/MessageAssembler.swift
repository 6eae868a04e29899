/// Assembles frames into messages (RFC 6455 §5.4, §5.5, §5.6): continuation frames, control frames
/// interleaved in a fragmented message, incremental UTF-8 validation of text, close payload validation.
///
/// Feed it frames in order with `consume(_:payload:)`; `validate(_:)` checks a header before its payload
/// arrives, so that a message that is too big is rejected without buffering it.
struct MessageAssembler: Sendable {
    /// What `consume(_:payload:)` produced.
    enum Assembly: Equatable, Sendable {
        /// A fragment was stored; the message is still open.
        case incomplete
        /// The frame's own payload is a complete message with this opcode (an unfragmented message or a
        /// control frame).
        case frame(Opcode)
        /// The fragments assembled so far form a complete message with this opcode; read it with
        /// `withAssembledPayload(_:)` before the next `consume`.
        case assembled(Opcode)
    }

    /// The largest message payload accepted.
    let maximumMessageSize: Int
    /// The largest payload accepted of a message an extension transformed (reserved bits on its first frame: for
    /// permessage-deflate, compressed), whose restored size the extension bounds.
    let maximumTransformedSize: Int

    /// The RSV bits of the first frame of the last fragmented message (what an extension such as
    /// permessage-deflate marks per message). A text message so marked is not validated as UTF-8 here: the
    /// extension transformed its payload, and it is validated once restored.
    private(set) var messageReservedBits: UInt8 = 0
    /// The opcode (text or binary) of the fragmented message in progress.
    private var openOpcode: Opcode?
    private var fragments: [UInt8] = []
    /// `fragments` holds a finished message that is dropped on the next `consume`.
    private var assembledReady = false
    private var utf8 = UTF8Validator()
    /// How many payload bytes of the frame being received `validateArrived(_:payload:)` has already checked.
    private var frameValidatedCount = 0

    /// - Parameters:
    ///   - maximumMessageSize: the largest message payload accepted (default 16 MiB); larger is a 1009.
    ///   - maximumTransformedSize: the same for a message an extension transformed (default `maximumMessageSize`).
    init(maximumMessageSize: Int = 16 << 20, maximumTransformedSize: Int? = nil) {
        precondition(maximumMessageSize >= 0, "negative maximumMessageSize")
        self.maximumMessageSize = maximumMessageSize
        self.maximumTransformedSize = max(maximumMessageSize, maximumTransformedSize ?? maximumMessageSize)
    }

    /// The limit of a message whose first frame carries `reservedBits`.
    private func limit(reservedBits: UInt8) -> Int {
        reservedBits == 0 ? self.maximumMessageSize : self.maximumTransformedSize
    }

    /// The payload bytes of the fragmented message in progress (0 once it is complete).
    var bufferedByteCount: Int { self.assembledReady ? 0 : self.fragments.count }

    /// True while a fragmented message is open (continuation frames are expected).
    var isMessageOpen: Bool { self.openOpcode != nil }

    /// Checks the ordering and size rules for a frame from its header alone. Reserved bits (when the parser allows
    /// them for an extension) mark a message on its first frame only: on a continuation or control frame they are a
    /// 1002 (RFC 7692 §6.1).
    func validate(_ header: FrameHeader) throws(ProtocolError) {
        if header.reservedBits != 0, header.opcode != .text, header.opcode != .binary {
            throw ProtocolError(.reservedBitsSet(header.reservedBits))
        }
        switch header.opcode {
        case .continuation:
            guard self.openOpcode != nil else { throw ProtocolError(.unexpectedContinuation) }
            let limit = self.limit(reservedBits: self.messageReservedBits)
            if header.payloadLength > limit - self.bufferedByteCount {
                throw ProtocolError(.messageTooBig(limit: limit))
            }
        case .text, .binary:
            guard self.openOpcode == nil else { throw ProtocolError(.dataFrameInsideMessage) }
            let limit = self.limit(reservedBits: header.reservedBits)
            if header.payloadLength > limit {
                throw ProtocolError(.messageTooBig(limit: limit))
            }
        default:
            // Control frames are checked by the frame parser (length, FIN) and by `consume` (close payload).
            break
        }
    }

    /// Checks the UTF-8 of a text frame's payload while the frame is still arriving, so that an invalid byte
    /// fails the connection when it arrives, not when the frame's tail does (Autobahn 6.4.3, 6.4.4).
    ///
    /// - Parameters:
    ///   - header: the header of the frame being received (already checked by `validate(_:)`).
    ///   - prefix: the frame's unmasked payload bytes received so far; each call may pass a longer prefix.
    ///     Only the bytes not seen before are checked, and `consume` later checks only the rest.
    mutating func validateArrived(_ header: FrameHeader, payload prefix: UnsafeRawBufferPointer)
        throws(ProtocolError)
    {
        guard prefix.count > self.frameValidatedCount else { return }
        switch header.opcode {
        case .text where header.reservedBits != 0:
            return  // transformed by an extension (compressed): validated once restored
        case .text:
            // The first bytes of a new text message start a new validation.
            if self.frameValidatedCount == 0 { self.utf8 = UTF8Validator() }
        case .continuation where self.openOpcode == .text && self.messageReservedBits == 0:
            break
        default:
            return
        }
        guard self.utf8.validate(UnsafeRawBufferPointer(rebasing: prefix[self.frameValidatedCount...])) else {
            throw ProtocolError(.invalidUTF8)
        }
        self.frameValidatedCount = prefix.count
    }

    /// Feeds one frame with its unmasked payload.
    mutating func consume(
        _ header: FrameHeader,
        payload: UnsafeRawBufferPointer
    ) throws(ProtocolError) -> Assembly {
        if self.assembledReady {
            // Keep the buffer for the next message unless one very large message grew it.
            self.fragments.removeAll(keepingCapacity: self.fragments.capacity <= 4 << 20)
            self.assembledReady = false
        }
        try self.validate(header)
        // Bytes `validateArrived` checked while the frame arrived are not checked again.
        let validated = self.frameValidatedCount
        self.frameValidatedCount = 0
        switch header.opcode {
        case .text, .binary:
            if header.fin {
                if header.opcode == .text, header.reservedBits == 0 {
                    let valid = validated == 0
                        ? UTF8Validator.isValid(payload)
                        : self.utf8.validate(UnsafeRawBufferPointer(rebasing: payload[validated...]))
                            && self.utf8.isAtBoundary
                    guard valid else { throw ProtocolError(.invalidUTF8) }
                }
                return .frame(header.opcode)
            }
            self.openOpcode = header.opcode
            self.messageReservedBits = header.reservedBits
            if validated == 0 { self.utf8 = UTF8Validator() }
            return try self.store(payload, fin: false, validated: validated)
        case .continuation:
            return try self.store(payload, fin: header.fin, validated: validated)
        case .close:
            try Self.validateClosePayload(payload)
            return .frame(.close)
        default:
            return .frame(header.opcode)
        }
    }

    /// Lends the message completed by the last `consume` that returned `.assembled`.
    func withAssembledPayload<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(self.assembledReady, "no assembled message to read")
        // `Array.withUnsafeBytes` is untyped `rethrows`; carry the typed error out in a `Swift.Result`.
        let outcome = self.fragments.withUnsafeBytes { bytes -> Swift.Result<Result, Failure> in
            do throws(Failure) {
                return .success(try body(bytes))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Checks a close frame's payload: empty, or a code valid on the wire followed by a UTF-8 reason.
    static func validateClosePayload(_ payload: UnsafeRawBufferPointer) throws(ProtocolError) {
        guard !payload.isEmpty else { return }
        guard payload.count >= 2 else { throw ProtocolError(.closePayloadTooShort) }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard CloseCode.isValidOnWire(code) else { throw ProtocolError(.invalidCloseCode(code)) }
        guard UTF8Validator.isValid(UnsafeRawBufferPointer(rebasing: payload[2...])) else {
            throw ProtocolError(.invalidCloseReason)
        }
    }

    private mutating func store(
        _ payload: UnsafeRawBufferPointer,
        fin: Bool,
        validated: Int
    ) throws(ProtocolError) -> Assembly {
        guard let opcode = self.openOpcode else { preconditionFailure("store without an open message") }
        if opcode == .text, self.messageReservedBits == 0 {
            // Reject in the fragment where the invalid byte appears, not when the message ends.
            let unchecked = UnsafeRawBufferPointer(rebasing: payload[validated...])
            guard self.utf8.validate(unchecked), !fin || self.utf8.isAtBoundary else {
                throw ProtocolError(.invalidUTF8)
            }
        }
        payload.withMemoryRebound(to: UInt8.self) { self.fragments.append(contentsOf: $0) }
        guard fin else { return .incomplete }
        self.openOpcode = nil
        self.assembledReady = true
        return .assembled(opcode)
    }
}
