// A stand-in for UIKit: exactly the API Sources/Tether/Lifecycle/UIApplicationLifecycleObserver.swift uses, declared
// as Apple's documentation gives it (isolation included), for scripts/apple-typecheck.sh. Nothing here runs.
// Sources: developer.apple.com/documentation/uikit/uiapplication/...
import Foundation

/// `struct UIBackgroundTaskIdentifier` (documentation/uikit/uibackgroundtaskidentifier): RawRepresentable over Int,
/// Hashable, Sendable.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `static let invalid: UIBackgroundTaskIdentifier`
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// `@MainActor class UIApplication : UIResponder` (documentation/uikit/uiapplication).
@MainActor
open class UIApplication {
    /// `class var shared: UIApplication { get }`
    public class var shared: UIApplication { UIApplication() }
    init() {}

    /// `nonisolated class let didEnterBackgroundNotification: NSNotification.Name`
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name(
        "UIApplicationDidEnterBackgroundNotification")
    /// `nonisolated class let willEnterForegroundNotification: NSNotification.Name`
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name(
        "UIApplicationWillEnterForegroundNotification")

    /// `nonisolated func beginBackgroundTask(withName taskName: String?,
    ///     expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil) -> UIBackgroundTaskIdentifier`
    /// (documentation/uikit/uiapplication/beginbackgroundtask(withname:expirationhandler:); the unnamed variant's
    /// page gives the same handler type)
    nonisolated public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { .invalid }

    /// `nonisolated func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`
    nonisolated public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}
}
