// example begin: README.md#client
import Foundation
import Tether
// example end

/// The client examples of README.md and docs/client.md, compiled: they talk to a server on the internet, so the
/// tests do not call them (`TestingExamples` runs the same calls against a scripted transport and a local server).
/// `DocumentationExampleTests` checks that the pages show them as they are.
enum ClientExamples {
    static func readme() async throws {
        // example begin: README.md#client
        var configuration = WebSocketConfiguration(url: URL(string: "wss://example.com/feed")!)
        configuration.heartbeatInterval = .seconds(15)   // ping one interval after open / after each pong
        configuration.heartbeatTimeout = .seconds(5)     // a pong at or after the deadline is late
        let client = try WebSocketClient(configuration: configuration)  // WebSocketConfigurationError if out of range

        await client.start()
        Task {
            for await event in client.events {           // unicast: one consumer
                switch event {
                case .message(let message, _): handle(message)
                case .stateChanged(let state, let cause): updateBanner(state, cause)
                case .outboxDropped(let message, let reason): report(message, reason)  // expired, interrupted, stopped
                case .roundTrip, .record: break
                }
            }
        }
        try await client.send(text: "hello")              // throws WebSocketSendError.notOpen instead of dropping
        try await client.send(.text("later"), policy: .queued(expiresAfter: .seconds(30)))  // the outbox
        await client.reconnectNow()                       // the user's "retry": at once, whatever the path says
        await client.enterBackground()                    // default policy: close with 1001, reconnect on return
        await client.enterForeground()
        await client.stop()                               // returns when every connection and timer is gone
        // example end
    }

    static func waitUntilOpen(_ client: WebSocketClient) async throws {
        // example begin: docs/client.md#wait-until-open
        await client.start()
        try await client.waitUntilOpen(timeout: .seconds(10))  // or throws WebSocketOpenError
        try await client.send(text: "hello")
        // example end
    }

    static func states(_ client: WebSocketClient) {
        // example begin: docs/client.md#states
        Task {
            for await state in client.states {               // the current state first, then every change (the latest)
                updateBanner(state, nil)
                if let left = state.timeUntilRetry() {       // waiting: "retrying in 4 s"
                    showRetry(in: left)
                }
            }
        }
        // example end
    }

    static func eventsOnTheLoop(_ client: WebSocketClient) {
        // example begin: docs/client.md#event-executor
        Task(executorPreference: client.eventExecutor) {
            for await event in client.events { handle(event) }  // on the loop: answer quickly, hop away for heavy work
        }
        // example end
    }

    static func compression(_ configuration: inout WebSocketConfiguration) {
        // example begin: docs/compression.md#settings
        configuration.compression = .standard                        // offer permessage-deflate; client_max_window_bits
        configuration.compression = CompressionOptions(
            offers: [.init(serverMaxWindowBits: 10, clientMaxWindowBits: .limit(10)), .bare],
            threshold: 256,                                          // compress messages of 256 bytes or more
            memoryLevel: 7)                                          // zlib's memory level for what we send
        // example end
    }

    static func compressionPerMessage(_ client: WebSocketClient, thumbnail: Data, ack: String) async throws {
        // example begin: docs/compression.md#per-message
        try await client.send(.binary(thumbnail), compression: .never)   // already compressed (JPEG): skip zlib
        try await client.send(.text(ack), compression: .always)          // small, but compressed anyway
        try await client.send(.text(ack), policy: .queued(expiresAfter: .seconds(30)), compression: .always)
        // example end
    }

    static func tls(_ configuration: inout WebSocketConfiguration) {
        // example begin: docs/tls.md#options
        configuration.tls.additionalTrustRoots = [.pemFile("/etc/myapp/ca.pem")]   // or .pem(data)
        configuration.tls.pins = ["sha256/47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]  // SPKI SHA-256, like curl's
        configuration.tls.insecureSkipVerification = true                       // local testing only
        configuration.tls.sessionResumption = false                             // default true, see below
        // example end
    }

    static func clientCertificate() throws {
        // example begin: docs/tls.md#client-certificate
        var configuration = WebSocketConfiguration(url: URL(string: "wss://api.internal.example/feed")!)
        configuration.tls.clientIdentity = .pem(
            certificateChain: .pemFile("/etc/myapp/device.pem"),    // or .pem(data)
            privateKey: .pemFile("/etc/myapp/device.key"))          // or .pem(data)
        let client = try WebSocketClient(configuration: configuration)
        // example end
        _ = client
    }

    static func encryptedKey(_ configuration: inout WebSocketConfiguration, _ passphraseFromYourKeychain: String) {
        // example begin: docs/tls.md#encrypted-key
        configuration.tls.clientIdentity = .pem(
            certificateChain: .pemFile("/etc/myapp/device.pem"), privateKey: .pemFile("/etc/myapp/device.key"),
            passphrase: passphraseFromYourKeychain)
        // example end
    }

    static func pkcs12(_ configuration: inout WebSocketConfiguration, _ p12URL: URL) throws {
        // example begin: docs/tls.md#pkcs12
        configuration.tls.clientIdentity = .pkcs12(try Data(contentsOf: p12URL), passphrase: "…")
        // example end
    }

    static func happyEyeballs(_ url: URL) throws {
        // example begin: docs/networks.md#attempt-delay
        // A shorter delay, for a network known to have working IPv6 and IPv4 alike.
        let transport = SocketTransport(connectionAttemptDelay: .milliseconds(100))
        let client = try WebSocketClient(configuration: .init(url: url, transport: transport))
        // example end
        _ = client
    }

    static func socks(_ configuration: inout WebSocketConfiguration) {
        // example begin: docs/networks.md#socks
        configuration.proxy = .socks(SOCKSProxy(host: "127.0.0.1", port: 1080))            // the proxy resolves names
        configuration.proxy = .socks(SOCKSProxy(url: "socks5://alice:s3cret@proxy.corp:1080")!)  // we resolve them
        // example end
    }

    // What the examples call: an app's own code.
    static func handle(_ message: WebSocketMessage) {}
    static func handle(_ event: WebSocketEvent) {}
    static func updateBanner(_ state: ConnectionState, _ cause: CloseReason?) {}
    static func report(_ message: WebSocketMessage, _ reason: OutboxDropReason) {}
    static func showRetry(in time: Duration) {}
}
