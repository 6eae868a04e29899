// swift-tools-version: 6.0
import PackageDescription

// Tether: WebSocket connections that stay correct on unreliable networks.
//
// Module map (docs/ARCHITECTURE.md §1):
//   TetherCore        pure state machines (standard library only)
//   TetherWire        RFC 6455 sans-I/O codec (standard library, and zlib for permessage-deflate)
//   TetherPOSIX       non-blocking sockets on an epoll event loop (internal support module)
//   Tether            the public client actor, transports, path monitors, lifecycle
//   TetherTesting     what users' test targets import: manual clock, scripted transport and path monitor, recorder
//   TetherTestServer  a controllable WebSocket server for tests
//   TetherCLI         the `tether` command's logic (check, connect, serve), tested in-process
//   tether            the command-line entry point
//   tether-bench      benchmarks (`swift run -c release tether-bench core|wire|deflate|echo|idle|bounds`)
//   tether-autobahn   the Autobahn|Testsuite testee for the client (`scripts/autobahn.sh` runs it)
let package = Package(
    name: "Tether",
    // Synchronization.Mutex/Atomic set the Apple floor.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherWire", targets: ["TetherWire"]),
        .library(name: "Tether", targets: ["Tether"]),
        .library(name: "TetherTesting", targets: ["TetherTesting"]),
        .library(name: "TetherTestServer", targets: ["TetherTestServer"]),
        .executable(name: "tether", targets: ["tether"]),
        .executable(name: "tether-bench", targets: ["tether-bench"]),
    ],
    targets: [
        .target(name: "TetherCore"),
        // The system zlib for permessage-deflate: Debian's zlib1g-dev, found with pkg-config.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "TetherWire", dependencies: ["CZlib"]),
        // Linux kernel headers (epoll, eventfd, rtnetlink) from Debian's libc6-dev / linux-libc-dev.
        .systemLibrary(name: "CTetherLinux", path: "Sources/CTetherLinux"),
        // The system OpenSSL (3.0+) for TLS on Linux: Debian's libssl-dev, found with pkg-config.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "TetherPOSIX",
            dependencies: [
                "TetherWire",
                .target(name: "CTetherLinux", condition: .when(platforms: [.linux])),
                .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "Tether",
            dependencies: [
                "TetherCore", "TetherWire", "TetherPOSIX",
                .target(name: "CTetherLinux", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "TetherTesting", dependencies: ["Tether", "TetherCore", "TetherPOSIX"]),
        .target(
            name: "TetherTestServer",
            dependencies: ["TetherWire", "TetherPOSIX", .target(name: "COpenSSL", condition: .when(platforms: [.linux]))]
        ),
        .target(
            name: "TetherCLI",
            dependencies: ["Tether", "TetherTesting", "TetherTestServer", "TetherCore", "TetherWire", "TetherPOSIX"]
        ),
        .executableTarget(name: "tether", dependencies: ["TetherCLI"]),
        .executableTarget(
            name: "tether-bench",
            dependencies: ["TetherCore", "TetherWire", "TetherPOSIX", "Tether", "TetherTestServer"]
        ),
        .executableTarget(name: "tether-autobahn", dependencies: ["Tether", "TetherCore"]),
        // What several test targets share (a reserved port, the process's sockets): not a product.
        .target(name: "TetherTestSupport", path: "Tests/TetherTestSupport"),
        .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore"]),
        .testTarget(name: "TetherWireTests", dependencies: ["TetherWire"]),
        .testTarget(name: "TetherPOSIXTests", dependencies: ["TetherPOSIX", "TetherTestServer", "TetherTestSupport"]),
        .testTarget(
            name: "TetherTests",
            dependencies: [
                "Tether", "TetherTesting", "TetherTestServer", "TetherCore", "TetherWire", "TetherPOSIX",
                "TetherTestSupport",
            ]
        ),
        .testTarget(
            name: "TetherTestingTests", dependencies: ["TetherTesting", "Tether", "TetherCore", "TetherTestServer"]
        ),
        .testTarget(
            name: "TetherTestServerTests",
            dependencies: ["TetherTestServer", "TetherWire", "TetherPOSIX", "TetherTestSupport"]
        ),
        .testTarget(
            name: "TetherCLITests",
            dependencies: [
                "TetherCLI", "Tether", "TetherTesting", "TetherCore", "TetherTestServer", "TetherWire", "TetherPOSIX",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
