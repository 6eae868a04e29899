/// A close status code (RFC 6455 §7.4), with named cases for the registered codes 1000–1015 and a
/// catch-all for everything else (including application codes 3000–4999).
public enum CloseCode: Hashable, Sendable {
    case normalClosure          // 1000
    case goingAway              // 1001
    case protocolError          // 1002
    case unsupportedData        // 1003
    case noStatusReceived       // 1005, never sent on the wire
    case abnormalClosure        // 1006, never sent on the wire
    case invalidPayloadData     // 1007
    case policyViolation        // 1008
    case messageTooBig          // 1009
    case mandatoryExtension     // 1010
    case internalError          // 1011
    case serviceRestart         // 1012
    case tryAgainLater          // 1013
    case badGateway             // 1014
    case tlsHandshake           // 1015, never sent on the wire
    /// Any other value, including the reserved 1004 and application codes.
    case unknown(UInt16)

    public init(rawValue: UInt16) {
        switch rawValue {
        case 1000: self = .normalClosure
        case 1001: self = .goingAway
        case 1002: self = .protocolError
        case 1003: self = .unsupportedData
        case 1005: self = .noStatusReceived
        case 1006: self = .abnormalClosure
        case 1007: self = .invalidPayloadData
        case 1008: self = .policyViolation
        case 1009: self = .messageTooBig
        case 1010: self = .mandatoryExtension
        case 1011: self = .internalError
        case 1012: self = .serviceRestart
        case 1013: self = .tryAgainLater
        case 1014: self = .badGateway
        case 1015: self = .tlsHandshake
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: UInt16 {
        switch self {
        case .normalClosure: 1000
        case .goingAway: 1001
        case .protocolError: 1002
        case .unsupportedData: 1003
        case .noStatusReceived: 1005
        case .abnormalClosure: 1006
        case .invalidPayloadData: 1007
        case .policyViolation: 1008
        case .messageTooBig: 1009
        case .mandatoryExtension: 1010
        case .internalError: 1011
        case .serviceRestart: 1012
        case .tryAgainLater: 1013
        case .badGateway: 1014
        case .tlsHandshake: 1015
        case .unknown(let value): value
        }
    }

    /// Whether the code may appear in a close frame (RFC 6455 §7.4.1, §7.4.2): 1000–1003, 1007–1014
    /// and 3000–4999. 1004, 1005, 1006, 1015, codes below 1000, 1016–2999 and 5000 and above are not.
    public var isValidOnWire: Bool {
        CloseCode.isValidOnWire(self.rawValue)
    }

    /// `isValidOnWire` for a raw value.
    public static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
