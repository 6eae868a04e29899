// Stand-in: CoreFoundation's types as Swift sees them on Apple platforms (module StandInCoreFoundation, which the
// Foundation and Security stand-ins re-export, as Apple's Foundation and Security re-export CoreFoundation), for
// scripts/apple-typecheck.sh. Declarations only: nothing here runs.
//
// On Apple platforms CFString, CFData, CFArray, CFDictionary and CFError are classes of their own, toll-free bridged
// to NSString, NSData, NSArray, NSDictionary and NSError (`typedef const struct CF_BRIDGED_TYPE(NSString) __CFString
// *CFStringRef;` in CFBase.h, `typedef struct CF_BRIDGED_TYPE(NSError) __CFError *CFErrorRef;` in CFError.h). So
// `"x" as CFString` and `cfString as String` are bridging casts, `cfArray as? [SecCertificate]` and
// `cfDictionary as? [CFString: Any]` conditional ones, and a CFString never matches a String without a cast:
// `case kSecAttrKeyTypeRSA as String:` is an error ("expression pattern of type 'CFString' cannot match values of
// type 'String'"). Linux's Foundation has the NS classes and the same `as` bridging to the Swift value types, so each
// CF type here is its NS class: a class distinct from the Swift type, bridged by the same casts, rejected by the same
// patterns. Not modelled: that CFString and NSString are two types on Apple (`nsString as CFString` is an explicit
// toll-free cast there, an identity here).
//
// Checked against: the CF_BRIDGED_TYPE typedefs of CFBase.h and CFError.h as Apple's headers declare them (read in
// copies of those headers; the iOS 18 SDK copy scripts/apple-typecheck.sh names holds neither file).
import Foundation

/// `typedef const struct CF_BRIDGED_TYPE(NSString) __CFString *CFStringRef;` (CFBase.h)
public typealias CFString = NSString
/// `typedef const struct CF_BRIDGED_TYPE(NSData) __CFData *CFDataRef;` (CFData.h)
public typealias CFData = NSData
/// `typedef const struct CF_BRIDGED_TYPE(NSArray) __CFArray *CFArrayRef;` (CFArray.h)
public typealias CFArray = NSArray
/// `typedef const struct CF_BRIDGED_TYPE(NSDictionary) __CFDictionary *CFDictionaryRef;` (CFDictionary.h)
public typealias CFDictionary = NSDictionary
/// `typedef struct CF_BRIDGED_TYPE(NSError) __CFError *CFErrorRef;` (CFError.h)
public typealias CFError = NSError
/// `typedef const CF_BRIDGED_TYPE(id) void *CFTypeRef;` (CFBase.h), imported as `AnyObject`.
public typealias CFTypeRef = AnyObject
/// `typedef signed long CFIndex;` (CFBase.h)
public typealias CFIndex = Int
/// `typedef SInt32 OSStatus;` (MacTypes.h)
public typealias OSStatus = Int32

/// `typedef const struct CF_BRIDGED_TYPE(id) __CFAllocator *CFAllocatorRef;` (CFBase.h)
public final class CFAllocator {}

/// `CFIndex CFErrorGetCode(CFErrorRef err)` (CFError.h; not nullability-audited, hence `CFError!`)
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { standIn() }

/// Every body of a stand-in: they are declarations for the type-check and never run.
func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
