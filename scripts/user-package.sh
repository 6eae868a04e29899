#!/usr/bin/env bash
# Builds what an app would write: a package of its own that depends on this one by path, whose only target
# depends on the `Tether` product and whose sources import `Tether` (and Foundation) and nothing else, holding
# the README's client example as the README shows it. It fails when the example needs another import, when a type
# the example names is not reachable through `import Tether`, or when the README's example imports more.
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
func decide(_ messages: [WebSocketMessage]) {}
/// What a connection of the app's own transport tells the heartbeat, and what a lost connection may not have
/// delivered, named with `import Tether` alone.
func progress(of connection: any TransportConnection) -> InboundProgress? { connection.inboundProgress() }
func count(_ lost: UnconfirmedMessages) -> Int { lost.messages.count + lost.notKept }

/// The settings an app names by type, each reachable without importing the modules that define them.
func configure(_ configuration: inout WebSocketConfiguration) {
    configuration.lifecycle = LifecyclePolicy.keepAndProbe
    configuration.backoff = BackoffPolicy(base: 500, factor: 2, cap: 30_000, jitterPercent: 20)
    configuration.retryPolicy = RetryPolicy(maximumAttempts: 10)
    configuration.inboundWatermarks = Watermarks(high: 1 << 20, low: 256 << 10)
    configuration.unconfirmedLimits = OutboxLimits(count: 100, bytes: 64 << 10)
}
func log(_ record: LogRecord) -> String { record.logLine }
EOF

swift build --package-path "$package" --scratch-path "$work/build" 2>&1 | tail -n 30
echo "user-package: a package that imports only Tether builds the README's example"
