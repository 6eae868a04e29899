#if canImport(UIKit) && !os(watchOS)
import Foundation
import UIKit

/// Wires `UIApplication`'s background and foreground notifications to a client through `AppLifecycleBridge`,
/// holding a background task (`beginBackgroundTask`) until the client's 1001 close frame was sent. Keep it
/// alive as long as the client; `invalidate()` stops observing.
@MainActor
public final class UIApplicationLifecycleObserver {
    private let bridge: AppLifecycleBridge
    private let notificationCenter: NotificationCenter
    private var observers: [any NSObjectProtocol] = []

    /// Observes the app's `UIApplication.shared`. Not in app extensions (a widget, a share extension), which have
    /// no `UIApplication`: Apple marks `shared` unavailable there, and so is this initializer; an extension drives
    /// `AppLifecycleBridge` from its own lifecycle instead.
    /// - Parameters:
    ///   - client: the client to drive.
    ///   - notificationCenter: defaults to `NotificationCenter.default`.
    @available(iOSApplicationExtension, unavailable, message: "an app extension has no UIApplication")
    @available(tvOSApplicationExtension, unavailable, message: "an app extension has no UIApplication")
    public convenience init(client: WebSocketClient, notificationCenter: NotificationCenter = .default) {
        self.init(client: client, application: .shared, notificationCenter: notificationCenter)
    }

    /// - Parameters:
    ///   - client: the client to drive.
    ///   - application: the app's `UIApplication` (`UIApplication.shared`).
    ///   - notificationCenter: defaults to `NotificationCenter.default`.
    public init(
        client: WebSocketClient,
        application: UIApplication,
        notificationCenter: NotificationCenter = .default
    ) {
        let bridge = AppLifecycleBridge(client: client, backgroundTasks: UIApplicationBackgroundTasks(application))
        self.bridge = bridge
        self.notificationCenter = notificationCenter
        // Queue `.main`: posted on the main thread, so the handler runs before the notification returns and the
        // background task begins before the app can be suspended.
        self.observers = [
            notificationCenter.addObserver(
                forName: UIApplication.didEnterBackgroundNotification, object: application, queue: .main
            ) { _ in
                MainActor.assumeIsolated { bridge.didEnterBackground() }
            },
            notificationCenter.addObserver(
                forName: UIApplication.willEnterForegroundNotification, object: application, queue: .main
            ) { _ in
                MainActor.assumeIsolated { bridge.willEnterForeground() }
            },
        ]
    }

    /// Stops observing the notifications.
    public func invalidate() {
        for observer in self.observers {
            self.notificationCenter.removeObserver(observer)
        }
        self.observers.removeAll()
    }
}

/// `UIApplication`'s background tasks as a `BackgroundTaskProvider`.
@MainActor
struct UIApplicationBackgroundTasks: BackgroundTaskProvider {
    let application: UIApplication

    init(_ application: UIApplication) {
        self.application = application
    }

    func beginBackgroundTask(named name: String, expiration: @escaping @MainActor @Sendable () -> Void) -> Int {
        self.application.beginBackgroundTask(withName: name) {
            MainActor.assumeIsolated { expiration() }
        }.rawValue
    }

    func endBackgroundTask(_ token: Int) {
        self.application.endBackgroundTask(UIBackgroundTaskIdentifier(rawValue: token))
    }
}
#endif
