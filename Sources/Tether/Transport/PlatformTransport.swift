/// Chooses the default transport for this platform.
enum PlatformTransport {
    static func makeDefault() -> any WebSocketTransport {
        #if canImport(Darwin)
        URLSessionTransport()
        #else
        URLSessionTransport()  // replaced by SocketTransport once it lands
        #endif
    }
}
