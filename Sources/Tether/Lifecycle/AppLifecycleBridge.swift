/// Lets an app keep running for a moment after it went to the background: `UIApplication`'s background tasks
/// on iOS (`UIApplicationLifecycleObserver` supplies them); tests supply a fake.
@MainActor
public protocol BackgroundTaskProvider {
    /// Asks for time to finish work in the background and returns a token for `endBackgroundTask(_:)`.
    /// `expiration` runs on the main actor, after this returns, if the time runs out first.
    func beginBackgroundTask(named name: String, expiration: @escaping @MainActor @Sendable () -> Void) -> Int
    /// Gives the time back; called exactly once per token.
    func endBackgroundTask(_ token: Int)
}

/// Feeds app lifecycle transitions to a client in the order they happened, and holds a background task from
/// the moment the app enters the background until the client's 1001 close frame has been sent (or its bound
/// passed), so the close goes out before the app is suspended.
///
/// Platform-free, so it is tested on Linux; `UIApplicationLifecycleObserver` is the thin UIKit shell that calls
/// it from the notifications. Transitions run one at a time on one task: a quick background-foreground pair
/// reaches the client as background then foreground, never the other way round.
@MainActor
public final class AppLifecycleBridge {
    private enum Transition {
        case background(assertion: Int)
        case foreground
    }

    private let transitions: AsyncStream<Transition>.Continuation
    private let backgroundTasks: any BackgroundTaskProvider
    /// Background-task tokens not yet ended, by the bridge's own assertion number.
    private var assertions: [Int: Int] = [:]
    private var nextAssertion = 0

    /// - Parameters:
    ///   - enterBackground: called for each background transition; the background task is held until it returns
    ///     (`WebSocketClient.enterBackground()` returns once its close frame was sent, or after its bound).
    ///   - enterForeground: called for each foreground transition.
    ///   - backgroundTasks: where the background task is begun and ended.
    public init(
        enterBackground: @escaping @Sendable () async -> Void,
        enterForeground: @escaping @Sendable () async -> Void,
        backgroundTasks: any BackgroundTaskProvider
    ) {
        let (stream, transitions) = AsyncStream.makeStream(of: Transition.self, bufferingPolicy: .unbounded)
        self.transitions = transitions
        self.backgroundTasks = backgroundTasks
        // Ends when the bridge is released (its deinit finishes the stream).
        Task { @MainActor [weak self] in
            for await transition in stream {
                switch transition {
                case .background(let assertion):
                    await enterBackground()
                    self?.endAssertion(assertion)
                case .foreground:
                    await enterForeground()
                }
            }
        }
    }

    /// A bridge for `client`.
    public convenience init(
        client: WebSocketClient, backgroundTasks: any BackgroundTaskProvider
    ) {
        self.init(
            enterBackground: { await client.enterBackground() },
            enterForeground: { await client.enterForeground() },
            backgroundTasks: backgroundTasks
        )
    }

    deinit {
        self.transitions.finish()
    }

    /// The app entered the background. Begins the background task before returning (call it from the
    /// notification, on the main thread), then has the client close; the task ends when the client is done or
    /// when the system's time runs out, whichever comes first.
    public func didEnterBackground() {
        self.nextAssertion += 1
        let assertion = self.nextAssertion
        let token = self.backgroundTasks.beginBackgroundTask(named: "Tether: close WebSocket") { [weak self] in
            self?.endAssertion(assertion)
        }
        self.assertions[assertion] = token
        self.transitions.yield(.background(assertion: assertion))
    }

    /// The app is about to enter the foreground: the client re-evaluates (probe or reconnect).
    public func willEnterForeground() {
        self.transitions.yield(.foreground)
    }

    /// How many background tasks are held now.
    var heldAssertions: Int { self.assertions.count }

    private func endAssertion(_ assertion: Int) {
        guard let token = self.assertions.removeValue(forKey: assertion) else { return }  // ended already
        self.backgroundTasks.endBackgroundTask(token)
    }
}
