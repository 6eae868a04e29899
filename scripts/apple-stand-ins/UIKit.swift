// Stand-in: the part of UIKit Tether uses (UIApplicationLifecycleObserver), in signature only, with Apple's
// isolation and availability, for scripts/apple-typecheck.sh. Declarations only: nothing here runs.
//
// Availability as Apple declares it; the type-check makes `@available(iOSApplicationExtension, unavailable)` hold in
// its app-extension configuration (a widget or share extension builds its dependencies with
// APPLICATION_EXTENSION_API_ONLY), and `@available(watchOS, unavailable)` in its watchOS one.
//
// Checked against: xybp888/iOS-SDKs iPhoneOS18.0.sdk/System/Library/Frameworks/UIKit.framework/Headers/
// UIResponder.h (`UIKIT_EXTERN API_AVAILABLE(ios(2.0)) NS_SWIFT_UI_ACTOR @interface UIResponder : NSObject`), and for
// UIApplication.h, which that copy of the SDK does not hold, the header's declaration of `sharedApplication`
// (`@property(class, nonatomic, readonly) UIApplication *sharedApplication NS_EXTENSION_UNAVAILABLE_IOS("Use view
// controller based solutions where appropriate instead.");`) and Apple's Swift declarations at
// developer.apple.com/documentation/uikit/uiapplication: `@MainActor class UIApplication`,
// `nonisolated func beginBackgroundTask(withName:expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil)
// -> UIBackgroundTaskIdentifier`, `nonisolated func endBackgroundTask(_:)`, `nonisolated class let
// didEnterBackgroundNotification` and `willEnterForegroundNotification` (NS_SWIFT_NONISOLATED). UIApplication is not
// part of watchOS's UIKit.
import Foundation

/// `UIKIT_EXTERN API_AVAILABLE(ios(2.0)) NS_SWIFT_UI_ACTOR @interface UIResponder : NSObject` (UIResponder.h)
@MainActor
open class UIResponder: NSObject {}

/// `typedef NSUInteger UIBackgroundTaskIdentifier NS_TYPED_ENUM;` imported as a Sendable struct over Int.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `UIKIT_EXTERN const UIBackgroundTaskIdentifier UIBackgroundTaskInvalid`
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// `UIKIT_EXTERN API_AVAILABLE(ios(2.0)) @interface UIApplication : UIResponder`
@available(watchOS, unavailable)
@MainActor
open class UIApplication: UIResponder {
    /// `@property(class, nonatomic, readonly) UIApplication *sharedApplication NS_EXTENSION_UNAVAILABLE_IOS(...)`
    @available(
        iOSApplicationExtension, unavailable,
        message: "Use view controller based solutions where appropriate instead.")
    open class var shared: UIApplication { standIn() }

    /// `UIKIT_EXTERN NSNotificationName const UIApplicationDidEnterBackgroundNotification NS_SWIFT_NONISOLATED`
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name(
        "UIApplicationDidEnterBackgroundNotification")
    /// `UIKIT_EXTERN NSNotificationName const UIApplicationWillEnterForegroundNotification NS_SWIFT_NONISOLATED`
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name(
        "UIApplicationWillEnterForegroundNotification")

    /// `- (UIBackgroundTaskIdentifier)beginBackgroundTaskWithName:(nullable NSString *)taskName
    /// expirationHandler:(void(^ __nullable)(void))handler NS_SWIFT_NONISOLATED` (iOS 7), the handler called on the
    /// main thread.
    nonisolated open func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { standIn() }

    /// `- (void)endBackgroundTask:(UIBackgroundTaskIdentifier)identifier NS_SWIFT_NONISOLATED` (iOS 4)
    nonisolated open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) { standIn() }
}

/// Every body of a stand-in: they are declarations for the type-check and never run.
func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
