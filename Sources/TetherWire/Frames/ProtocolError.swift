/// A protocol violation by the peer. Carries the close code to send before closing the connection:
/// 1002 (protocol error), 1007 (invalid payload data) or 1009 (message too big); 1011 when this side could not
/// inflate a compressed message for want of memory.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the peer did wrong.
    public enum Kind: Equatable, Sendable {
        /// RSV bits set that no negotiated extension allows (1002).
        case reservedBitsSet(UInt8)
        /// A reserved opcode (3–7, 0xB–0xF) (1002).
        case unknownOpcode(UInt8)
        /// A control frame with a payload over 125 bytes (1002).
        case controlFrameTooLong(Int)
        /// A control frame without FIN (1002).
        case fragmentedControlFrame
        /// A 64-bit payload length with the most significant bit set (1002).
        case lengthTopBitSet
        /// A payload length not in its shortest encoding (1002).
        case nonMinimalLength
        /// A server sent a masked frame to the client (1002).
        case maskedFrameFromServer
        /// A client sent an unmasked frame to the server (1002).
        case unmaskedFrameFromClient
        /// A frame whose payload is larger than `maximumFrameSize` (1009).
        case frameTooBig(length: UInt64, limit: Int)
        /// A message whose payload would exceed `maximumMessageSize` (1009).
        case messageTooBig(limit: Int)
        /// A continuation frame with no message open (1002).
        case unexpectedContinuation
        /// A new text or binary frame while a fragmented message is still open (1002).
        case dataFrameInsideMessage
        /// A text message that is not valid UTF-8 (1007).
        case invalidUTF8
        /// A close frame with a 1-byte payload (1002).
        case closePayloadTooShort
        /// A close frame with a code that may not be sent on the wire (1002).
        case invalidCloseCode(UInt16)
        /// A close frame whose reason is not valid UTF-8 (1007).
        case invalidCloseReason
        /// A compressed message (permessage-deflate) whose payload is not valid DEFLATE data (1007).
        case invalidCompressedData
        /// zlib could not allocate the state to inflate a compressed message (1011, an internal error).
        case inflaterUnavailable
    }

    /// What was wrong.
    public var kind: Kind

    /// The close code to send: 1002, 1007, 1009 or 1011.
    public var closeCode: UInt16

    /// The error for `kind`, with its close code.
    public init(_ kind: Kind) {
        self.kind = kind
        switch kind {
        case .invalidUTF8, .invalidCloseReason, .invalidCompressedData:
            self.closeCode = 1007
        case .inflaterUnavailable:
            self.closeCode = 1011
        case .frameTooBig, .messageTooBig:
            self.closeCode = 1009
        case .reservedBitsSet, .unknownOpcode, .controlFrameTooLong, .fragmentedControlFrame, .lengthTopBitSet,
            .nonMinimalLength, .maskedFrameFromServer, .unmaskedFrameFromClient, .unexpectedContinuation,
            .dataFrameInsideMessage, .closePayloadTooShort, .invalidCloseCode:
            self.closeCode = 1002
        }
    }

    /// A short reason to send in the close frame with `closeCode` (ASCII, well under the 123-byte limit).
    public var reason: String {
        switch self.kind {
        case .reservedBitsSet: "reserved bits set"
        case .unknownOpcode: "unknown opcode"
        case .controlFrameTooLong: "control frame too long"
        case .fragmentedControlFrame: "fragmented control frame"
        case .lengthTopBitSet: "invalid payload length"
        case .nonMinimalLength: "non-minimal payload length"
        case .maskedFrameFromServer: "masked frame from server"
        case .unmaskedFrameFromClient: "unmasked frame from client"
        case .frameTooBig: "frame too big"
        case .messageTooBig: "message too big"
        case .unexpectedContinuation: "unexpected continuation frame"
        case .dataFrameInsideMessage: "data frame inside fragmented message"
        case .invalidUTF8: "invalid UTF-8 in text message"
        case .closePayloadTooShort: "close payload of one byte"
        case .invalidCloseCode: "invalid close code"
        case .invalidCloseReason: "invalid UTF-8 in close reason"
        case .invalidCompressedData: "invalid compressed data"
        case .inflaterUnavailable: "cannot inflate"
        }
    }

    public var description: String { "WebSocket protocol error \(self.closeCode): \(self.reason)" }
}
