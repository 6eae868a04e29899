// A stand-in for Apple's Security framework (and the CoreFoundation names it brings): exactly the API
// Sources/Tether/Transport/Trust/ServerTrustEvaluator.swift uses, for scripts/apple-typecheck.sh. Nothing here
// runs. Signatures from developer.apple.com/documentation/security/<function>; OSStatus values are placeholders
// (the file names the constants, never their values).
//
// Limit: Linux has no CoreFoundation bridging, so CFString, CFData, CFArray and CFDictionary are aliases of the Swift
// types they bridge to: `as CFString` and `as? [CFString: Any]` type-check here, but the bridging itself is not
// checked.
import Foundation

public typealias OSStatus = Int32
public typealias CFIndex = Int
public typealias CFString = String
public typealias CFData = Data
public typealias CFArray = [Any]
public typealias CFDictionary = [AnyHashable: Any]
public typealias CFTypeRef = AnyObject
public final class CFError {}
public final class CFAllocator {}
/// `func CFErrorGetCode(_ err: CFError!) -> CFIndex`
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { 0 }

public final class SecTrust {}
public final class SecCertificate {}
public final class SecKey {}
public final class SecPolicy {}

/// `var errSecSuccess: OSStatus { get }` and the trust results the evaluator names.
public var errSecSuccess: OSStatus { 0 }
public var errSecHostNameMismatch: OSStatus { -1 }
public var errSecCertificateExpired: OSStatus { -2 }
public var errSecCertificateNotValidYet: OSStatus { -3 }
public var errSecNotTrusted: OSStatus { -4 }

/// `let kSecAttrKeyType: CFString`, `let kSecAttrKeyTypeRSA: CFString`, `let kSecAttrKeyTypeECSECPrimeRandom: CFString`
public let kSecAttrKeyType: CFString = "type"
public let kSecAttrKeyTypeRSA: CFString = "42"
public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"

/// `func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy`
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { SecPolicy() }
/// `func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus`
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus { 0 }
/// `func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate?`
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? { nil }
/// `func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus`
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus { 0 }
/// `func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus`
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus { 0 }
/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { false }
/// `func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray?` (iOS 15, macOS 12)
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { nil }
/// `func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey?`
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? { nil }
/// `func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary?`
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? { nil }
/// `func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
/// -> CFData?`
public func SecKeyCopyExternalRepresentation(
    _ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? { nil }
