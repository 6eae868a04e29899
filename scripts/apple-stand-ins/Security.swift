// Stand-in: the part of Apple's Security framework Tether uses (ServerTrustEvaluator, ClientIdentity+Security,
// SecurityChallengeCredentials), in signature only, for scripts/apple-typecheck.sh. Declarations only: nothing here
// runs; the OSStatus values are SecBase.h's.
//
// As Swift imports them: the Sec types are CF classes (`typedef struct CF_BRIDGED_TYPE(id) __SecTrust *SecTrustRef;`)
// with no Sendable annotation, so they are not Sendable; C functions are `@discardableResult` unless the header marks
// them `warn_unused_result` (SecTrustEvaluateWithError); `extern const CFStringRef` constants are CFStrings.
//
// Checked against, in xybp888/iOS-SDKs:
//   iPhoneOS18.0.sdk/System/Library/Frameworks/Security.framework/Headers/SecTrust.h (read whole): SecTrust,
//     SecTrustSetPolicies, SecTrustSetAnchorCertificates, SecTrustSetAnchorCertificatesOnly,
//     SecTrustEvaluateWithError (iOS 12, warn_unused_result), SecTrustCopyCertificateChain (iOS 15, _Nullable)
//   iPhoneOS18.0.sdk/System/Library/Frameworks/Security.framework/Headers/SecItem.h: kSecAttrKeyTypeRSA (iOS 2),
//     kSecAttrKeyTypeECSECPrimeRandom (iOS 10), kSecAttrKeyType
// and, the iOS 18 copy there holding no SecKey.h, SecCertificate.h, SecPolicy.h, SecImportExport.h, SecIdentity.h or
// SecBase.h, against Apple's Swift declarations: developer.apple.com/documentation/security for
// SecKeyCopyExternalRepresentation (iOS 10) and SecKeyCopyAttributes; the interfaces Swift imported from earlier iOS
// SDKs in swiftlang/swift validation-test/Renaming/Inputs/iOS/Security/ (SecPolicy.swift: SecPolicyCreateSSL;
// SecImportExport.swift: SecPKCS12Import, kSecImportExportPassphrase, kSecImportItemIdentity,
// kSecImportItemCertChain; SecTrust.swift), apple/swift-3-api-guidelines-review Platforms/iOS/Security/
// SecIdentity.swift, and DougGregor/swift-concurrency-objc iOS/Security/SecCertificate.swift
// (SecCertificateCreateWithData, SecCertificateCopyKey, iOS 12); the errSec* codes as Apple's documentation and
// SecBase.h list them.
import Foundation
@_exported import StandInCoreFoundation

/// `typedef struct CF_BRIDGED_TYPE(id) __SecTrust *SecTrustRef;` (SecTrust.h)
public final class SecTrust {}
/// `typedef struct CF_BRIDGED_TYPE(id) __SecCertificate *SecCertificateRef;` (SecBase.h)
public final class SecCertificate {}
/// `typedef struct CF_BRIDGED_TYPE(id) __SecKey *SecKeyRef;` (SecBase.h)
public final class SecKey {}
/// `typedef struct CF_BRIDGED_TYPE(id) __SecPolicy *SecPolicyRef;` (SecBase.h)
public final class SecPolicy {}
/// `typedef struct CF_BRIDGED_TYPE(id) __SecIdentity *SecIdentityRef;` (SecBase.h)
public final class SecIdentity {}

// SecBase.h: `CF_ENUM(OSStatus) { errSecSuccess = 0, ... }`, imported as `var errSecX: OSStatus { get }`.
public var errSecSuccess: OSStatus { 0 }
public var errSecAuthFailed: OSStatus { -25293 }
public var errSecHostNameMismatch: OSStatus { -67602 }
public var errSecCertificateExpired: OSStatus { -67818 }
public var errSecCertificateNotValidYet: OSStatus { -67819 }
public var errSecNotTrusted: OSStatus { -67843 }

// SecItem.h: `extern const CFStringRef kSecAttrKeyType` and the key types.
public var kSecAttrKeyType: CFString { standIn() }
public var kSecAttrKeyTypeRSA: CFString { standIn() }
public var kSecAttrKeyTypeECSECPrimeRandom: CFString { standIn() }

// SecImportExport.h: the options and result keys of SecPKCS12Import.
public var kSecImportExportPassphrase: CFString { standIn() }
public var kSecImportItemIdentity: CFString { standIn() }
public var kSecImportItemCertChain: CFString { standIn() }

/// `SecPolicyRef SecPolicyCreateSSL(Boolean server, CFStringRef __nullable hostname)` (SecPolicy.h)
@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { standIn() }

/// `OSStatus SecTrustSetPolicies(SecTrustRef trust, CFTypeRef policies)` (SecTrust.h)
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus { standIn() }

/// `OSStatus SecTrustSetAnchorCertificates(SecTrustRef trust, CFArrayRef __nullable anchorCertificates)`
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    standIn()
}

/// `OSStatus SecTrustSetAnchorCertificatesOnly(SecTrustRef trust, Boolean anchorCertificatesOnly)`
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    standIn()
}

/// `__attribute__((warn_unused_result)) bool SecTrustEvaluateWithError(SecTrustRef trust,
/// CFErrorRef _Nullable * _Nullable CF_RETURNS_RETAINED error)` (SecTrust.h, iOS 12)
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    standIn()
}

/// `_Nullable CF_RETURNS_RETAINED CFArrayRef SecTrustCopyCertificateChain(SecTrustRef trust)` (SecTrust.h, iOS 15)
@discardableResult
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { standIn() }

/// `SecCertificateRef __nullable SecCertificateCreateWithData(CFAllocatorRef __nullable allocator, CFDataRef data)`
/// (SecCertificate.h)
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? { standIn() }

/// `SecKeyRef __nullable SecCertificateCopyKey(SecCertificateRef certificate)` (SecCertificate.h, iOS 12)
@discardableResult
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? { standIn() }

/// `CFDictionaryRef _Nullable SecKeyCopyAttributes(SecKeyRef key)` (SecKey.h)
@discardableResult
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? { standIn() }

/// `CFDataRef _Nullable SecKeyCopyExternalRepresentation(SecKeyRef key, CFErrorRef *error)` (SecKey.h)
@discardableResult
public func SecKeyCopyExternalRepresentation(
    _ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? { standIn() }

/// `OSStatus SecPKCS12Import(CFDataRef pkcs12_data, CFDictionaryRef options,
/// CFArrayRef * __nonnull CF_RETURNS_RETAINED items)` (SecImportExport.h)
@discardableResult
public func SecPKCS12Import(
    _ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus { standIn() }

/// Every body of a stand-in: they are declarations for the type-check and never run.
func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
