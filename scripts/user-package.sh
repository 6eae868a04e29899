#!/usr/bin/env bash
# Builds what an app would write: a package of its own that depends on this one by path, whose only target
# depends on the `Tether` product and whose sources import `Tether` (and Foundation) and nothing else, holding
# the README's client example as the README shows it, and a view model's use of the client (waiting for open, the
# states, the observable state, readers that come and go). It fails when the example needs another import, when a
# type the example names is not reachable through `import Tether`, or when the README's example imports more.
#
#   scripts/user-package.sh    builds (debug) in .build/user-package, which later runs reuse
#
# No network: the only dependency is this checkout, and nothing is run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/.build/user-package"
package="$work/TetherUser"
mkdir -p "$package/Sources/App"

# The first ```swift block of the README (the client example): its import lines, then its body.
block=$(awk '/^```swift$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' README.md)
imports=$(printf '%s\n' "$block" | awk '/^import / { print; next } /^$/ { next } { exit }')
body=$(printf '%s\n' "$block" | awk 'started || (!/^import / && !/^$/) { started = 1; print }')
if [[ -z "$body" ]]; then
    echo "error: no Swift block found in README.md" >&2
    exit 1
fi
unexpected=$(printf '%s\n' "$imports" | grep -vE '^import (Tether|Foundation)$' || true)
if [[ -n "$unexpected" ]]; then
    echo "error: the README's example imports more than Tether (and Foundation): $unexpected" >&2
    exit 1
fi

# The package identity SwiftPM gives a path dependency: the directory's name, lowercased.
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
cat >"$package/Package.swift" <<EOF
// swift-tools-version: 6.0
// Written by scripts/user-package.sh: an app's package that uses Tether as a dependency.
import PackageDescription

let package = Package(
    name: "TetherUser",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(path: "$root")],
    targets: [.target(name: "App", dependencies: [.product(name: "Tether", package: "$identity")])],
    swiftLanguageModes: [.v6]
)
EOF

{
    printf '%s\n\n' "$imports"
    echo "// The README's client example, as the README shows it (scripts/user-package.sh wrote this file)."
    echo "func readmeExample() async throws {"
    printf '%s\n' "$body" | sed 's/^./    &/'
    echo "}"
} >"$package/Sources/App/ReadmeExample.swift"

# What the example calls: an app's own code, naming the types the events carry, with `import Tether` alone.
cat >"$package/Sources/App/AppCode.swift" <<'EOF'
import Tether

func handle(_ message: WebSocketMessage) {}
func updateBanner(_ state: ConnectionState, _ cause: CloseReason?) {
    let _: SessionPhase = state.phase
    let _: PathState = state.path
    let _: ConnectivityStatus = state.connectivity
}
func report(_ message: WebSocketMessage, _ reason: OutboxDropReason) {}

/// The settings an app names by type, each reachable without importing the modules that define them.
func configure(_ configuration: inout WebSocketConfiguration) {
    configuration.lifecycle = LifecyclePolicy.keepAndProbe
    configuration.backoff = BackoffPolicy(base: 500, factor: 2, cap: 30_000, jitterPercent: 20)
    configuration.retryPolicy = RetryPolicy(maximumAttempts: 10)
    configuration.inboundWatermarks = Watermarks(high: 1 << 20, low: 256 << 10)
}
func log(_ record: LogRecord) -> String { record.logLine }
EOF

# What an app's views and view models do with a client they share: wait for the session to open before sending,
# follow its state from several places (a sequence of states, an @Observable object for SwiftUI), and read its events
# from a view's task that is cancelled with the view and started again by the next one.
cat >"$package/Sources/App/ViewModel.swift" <<'EOF'
import Observation
import Tether

/// Sends once the session is open, telling each way the wait can end apart.
func sendWhenOpen(_ client: WebSocketClient) async throws {
    await client.start()
    do throws(WebSocketOpenError) {
        try await client.waitUntilOpen(timeout: .seconds(10))
    } catch .timedOut {
        return  // still trying: the state says how
    } catch .failed(let reason) {
        let _: CloseReason = reason
        return
    } catch .stopped, .cancelled {
        return
    }
    try await client.send(text: "hello")
}

/// A banner's text from the states, as they change: "retrying in 4 s".
func followBanner(_ client: WebSocketClient, show: @escaping @Sendable (String) -> Void) -> Task<Void, Never> {
    Task {
        for await state in client.states {
            if let left = state.timeUntilRetry() {
                show("retrying in \(left.components.seconds) s")
            } else {
                let _: ContinuousClock.Instant? = state.retryInstant
                show("\(state.phase)")
            }
        }
    }
}

/// A screen's model: the state for SwiftUI, and a reader of the events per appearance.
@MainActor
final class FeedModel {
    let client: WebSocketClient
    let connection: ObservableConnectionState
    private(set) var messages: [WebSocketMessage] = []
    private var reader: Task<Void, Never>?

    init(client: WebSocketClient) {
        self.client = client
        self.connection = ObservableConnectionState(client)
    }

    /// What a view's `.task` does: read until cancelled. A new reader takes over from the previous one.
    func appear() {
        self.reader?.cancel()  // detaches it: the events wait for the next reader
        let events = self.client.events
        self.reader = Task { [weak self] in
            for await event in events {
                guard case .message(let message, _) = event else { continue }
                self?.messages.append(message)
            }
        }
    }

    func disappear() {
        self.reader?.cancel()
        self.reader = nil
    }

    /// Calls `changed` once, the next time the observed state changes (what SwiftUI does for `body`).
    func onStateChange(_ changed: @escaping @Sendable () -> Void) -> SessionPhase {
        withObservationTracking { self.connection.state.phase } onChange: { changed() }
    }
}
EOF

swift build --package-path "$package" --scratch-path "$work/build" 2>&1 | tail -n 30
echo "user-package: a package that imports only Tether builds the README's example and a view model's use of it"
