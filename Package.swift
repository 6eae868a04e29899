// swift-tools-version: 6.2
// 6.2: the transports' `nonisolated(nonsending)` needs Swift 6.2 (Xcode 26); an older toolchain then says which
// version this package needs instead of failing on the syntax.
import PackageDescription

// Tether: WebSocket connections that stay correct on unreliable networks.
//
// Module map (docs/ARCHITECTURE.md §1):
//   TetherCore        pure state machines (standard library only)
//   TetherWire        RFC 6455 sans-I/O codec (standard library, and zlib for permessage-deflate)
//   Tether            the public client actor, transports, path monitors, lifecycle
//   TetherTesting     what users' test targets import: manual clock, scripted transport and path monitor, recorder
// Linux only (below, `linuxOnly`):
//   TetherPOSIX       non-blocking sockets on an epoll event loop (internal support module)
//   TetherTestServer  a controllable WebSocket server for tests
//   TetherCLI         the `tether` command's logic (check, connect, serve), tested in-process
//   tether            the command-line entry point
//   tether-bench      benchmarks (`swift run -c release tether-bench core|wire|deflate|echo|idle|bounds`)
//   tether-autobahn   the Autobahn|Testsuite testee for the client (`scripts/autobahn.sh` runs it)
//
// The Apple build graph holds what an app links: TetherCore, TetherWire, Tether and TetherTesting, with zlib from
// the SDK. Everything that needs Linux (epoll, eventfd, rtnetlink, OpenSSL, network namespaces) is declared only when
// this manifest is evaluated on Linux, and every dependency on it says `.when(platforms: [.linux])`, so an Apple
// build (Xcode, or `swift build` on a Mac) never sees it. scripts/apple-typecheck.sh reads that graph from the
// manifest and type-checks every source file in it against stand-ins of Apple's own declarations.
#if os(Linux)
let linuxOnly = true
#else
let linuxOnly = false
#endif

/// Dependencies on targets that exist on Linux only: present and conditional there, absent elsewhere.
func onLinux(_ names: String...) -> [Target.Dependency] {
    linuxOnly ? names.map { .target(name: $0, condition: .when(platforms: [.linux])) } : []
}

var products: [Product] = [
    .library(name: "TetherCore", targets: ["TetherCore"]),
    .library(name: "TetherWire", targets: ["TetherWire"]),
    .library(name: "Tether", targets: ["Tether"]),
    .library(name: "TetherTesting", targets: ["TetherTesting"]),
]

var targets: [Target] = [
    .target(name: "TetherCore"),
    // zlib for permessage-deflate: Debian's zlib1g-dev (found with pkg-config) on Linux; the SDK's zlib.h and
    // libz on Apple platforms, which need no pkg-config.
    linuxOnly
        ? .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])])
        : .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
    .target(name: "TetherWire", dependencies: ["CZlib"]),
    .target(name: "Tether", dependencies: ["TetherCore", "TetherWire"] + onLinux("TetherPOSIX", "CTetherLinux")),
    .target(name: "TetherTesting", dependencies: ["Tether", "TetherCore"] + onLinux("TetherPOSIX")),
    .testTarget(name: "TetherCoreTests", dependencies: ["TetherCore"]),
    .testTarget(name: "TetherWireTests", dependencies: ["TetherWire"]),
    .testTarget(
        name: "TetherTests",
        dependencies: ["Tether", "TetherTesting", "TetherCore", "TetherWire"]
            + onLinux("TetherTestServer", "TetherPOSIX", "TetherTestSupport")
    ),
    .testTarget(
        name: "TetherTestingTests",
        dependencies: ["TetherTesting", "Tether", "TetherCore"] + onLinux("TetherTestServer")
    ),
]

if linuxOnly {
    products += [
        .library(name: "TetherTestServer", targets: ["TetherTestServer"]),
        .executable(name: "tether", targets: ["tether"]),
        .executable(name: "tether-bench", targets: ["tether-bench"]),
    ]
    targets += [
        // Linux kernel headers (epoll, eventfd, rtnetlink) from Debian's libc6-dev / linux-libc-dev.
        .systemLibrary(name: "CTetherLinux", path: "Sources/CTetherLinux"),
        // The system OpenSSL (3.0+) for TLS on Linux: Debian's libssl-dev, found with pkg-config.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "TetherPOSIX", dependencies: ["TetherWire", "CTetherLinux", "COpenSSL"]),
        .target(name: "TetherTestServer", dependencies: ["TetherWire", "TetherPOSIX", "COpenSSL"]),
        .target(
            name: "TetherCLI",
            dependencies: ["Tether", "TetherTesting", "TetherTestServer", "TetherCore", "TetherWire", "TetherPOSIX"]
        ),
        // The executables need Linux: `tether` and `tether-bench` run the socket transport and the test server,
        // `tether-autobahn` drives `SocketTransport`.
        .executableTarget(name: "tether", dependencies: ["TetherCLI"]),
        .executableTarget(
            name: "tether-bench",
            dependencies: ["TetherCore", "TetherWire", "TetherPOSIX", "Tether", "TetherTestServer"]
        ),
        .executableTarget(name: "tether-autobahn", dependencies: ["Tether", "TetherCore"]),
        // What several test targets share (a reserved port, the process's sockets): not a product.
        .target(name: "TetherTestSupport", path: "Tests/TetherTestSupport"),
        .testTarget(name: "TetherPOSIXTests", dependencies: ["TetherPOSIX", "TetherTestServer", "TetherTestSupport"]),
        .testTarget(
            name: "TetherTestServerTests",
            dependencies: ["TetherTestServer", "TetherWire", "TetherPOSIX", "TetherTestSupport"]
        ),
        .testTarget(
            name: "TetherCLITests",
            dependencies: [
                "TetherCLI", "Tether", "TetherTesting", "TetherCore", "TetherTestServer", "TetherWire", "TetherPOSIX",
                "TetherTestSupport",
            ]
        ),
    ]
}

let package = Package(
    name: "Tether",
    // Synchronization.Mutex/Atomic set the Apple floor.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: products,
    targets: targets,
    swiftLanguageModes: [.v6]
)
