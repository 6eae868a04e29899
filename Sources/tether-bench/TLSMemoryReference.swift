#if os(Linux)
import TetherPOSIX

/// The same-run reference for `echo.tls_mbps_1m`: what TLS alone costs a 1 MiB echo on this machine, with no socket,
/// event loop, WebSocket or task. A client and a server `TLSSession` are paired in memory on one thread; each round
/// trip encrypts the message on the client, decrypts it on the server, encrypts it again there and decrypts it on
/// the client — the four passes over the payload that the embedded TLS echo makes, in one process on this machine's
/// cores. Printed as `echo.tls_memory_mbps_1m`, payload MB/s (10^6 bytes) one way.
enum TLSMemoryReference {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func measure(seconds: Double, server: TLSServerOptions, client: TLSClientOptions) throws -> Double {
        let clientSession = TLSSession(context: try TLSContext.client(client), serverName: "127.0.0.1")
        let serverSession = TLSSession(serverContext: try TLSContext.server(server))
        for _ in 0..<20 {
            let clientDone = try clientSession.handshake()
            clientSession.takeCiphertext { serverSession.receive($0) }
            let serverDone = try serverSession.handshake()
            serverSession.takeCiphertext { clientSession.receive($0) }
            if clientDone, serverDone { break }
        }
        let message = [UInt8](repeating: 0x5A, count: 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        // One round trip: the message through `from`, read whole on `to`, then back.
        func pass(_ from: TLSSession, _ to: TLSSession) throws {
            try message.withUnsafeBytes { try from.write($0) }
            from.takeCiphertext { to.receive($0) }
            var received = 0
            while received < message.count {
                let result = try buffer.withUnsafeMutableBytes { try to.read(into: $0) }
                guard case .bytes(let count) = result else {
                    throw Failure(description: "TLS in memory: \(result) after \(received) bytes")
                }
                received += count
            }
        }
        let clock = ContinuousClock()
        for _ in 0..<4 {  // warm-up
            try pass(clientSession, serverSession)
            try pass(serverSession, clientSession)
        }
        var trips = 0
        let start = clock.now
        let limit = Duration.milliseconds(Int(seconds * 1000))
        while clock.now - start < limit {
            try pass(clientSession, serverSession)
            try pass(serverSession, clientSession)
            trips += 1
        }
        let elapsed = (clock.now - start) / .milliseconds(1) / 1000
        return Double(trips * message.count) / elapsed / 1e6
    }
}
#endif
