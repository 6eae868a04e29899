/// Chooses the default transport for this platform: `URLSessionTransport` on Apple platforms, Tether's own
/// `SocketTransport` on Linux (Foundation's WebSocket task there depends on libcurl's WebSocket support and
/// misbehaves even with it; docs/ARCHITECTURE.md §7).
enum PlatformTransport {
    static func makeDefault() -> any WebSocketTransport {
        #if os(Linux)
        SocketTransport()
        #else
        URLSessionTransport()
        #endif
    }
}
