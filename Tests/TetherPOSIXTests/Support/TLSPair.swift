#if os(Linux)
@testable import TetherPOSIX

/// A client and a server `TLSSession` paired in memory: the ciphertext each produces is the other's input.
final class TLSPair {
    let client: TLSSession
    let server: TLSSession
    var clientFailure: TLSFailure?
    var serverFailure: TLSFailure?

    /// Sessions of these contexts; `serverName` and `port` name the server to the client (SNI, verification, and
    /// the sessions its context keeps).
    init(_ client: TLSContext, _ server: TLSContext, serverName: String = "localhost", port: Int = 443) {
        self.client = TLSSession(context: client, serverName: serverName, port: port)
        self.server = TLSSession(serverContext: server)
    }

    convenience init(client options: TLSClientOptions, serverName: String = "localhost", server: TLSServerOptions) throws {
        self.init(try TLSContext.client(options), try TLSContext.server(server), serverName: serverName)
    }

    convenience init(client options: TLSClientOptions, serverName: String = "localhost", certificate: String) throws {
        let certificates = try TestCertificates.make()
        let server = TLSServerOptions(certificateChain: .file(certificate), privateKey: .file(certificates.keyFile))
        try self.init(client: options, serverName: serverName, server: server)
    }

    /// Moves ciphertext both ways until both handshakes completed or one failed. Returns whether both completed.
    func handshake() -> Bool {
        for _ in 0..<20 {
            var clientDone = false
            var serverDone = false
            do { clientDone = try self.client.handshake() } catch { self.clientFailure = error }
            self.client.takeCiphertext { self.server.receive($0) }
            do { serverDone = try self.server.handshake() } catch { self.serverFailure = error }
            self.server.takeCiphertext { self.client.receive($0) }
            if self.serverFailure != nil, self.clientFailure == nil {
                // The client reads the server's alert, as it would from the socket.
                do { _ = try self.client.handshake() } catch { self.clientFailure = error }
            }
            if self.clientFailure != nil || self.serverFailure != nil { return false }
            if clientDone, serverDone { return true }
        }
        return false
    }

    /// The handshake, then the client reads what the server sent after it (a TLS 1.3 server's session tickets,
    /// which reach the client as it reads). Returns whether both handshakes completed and nothing else came.
    func connect() -> Bool {
        guard self.handshake() else { return false }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let read = try? buffer.withUnsafeMutableBytes { try self.client.read(into: $0) }
        return read == .needMore
    }

    /// Encrypts `text` on `from`, hands its records to `to` and reads all the plaintext that comes out.
    func send(_ text: String, from: TLSSession, to: TLSSession) throws -> [UInt8] {
        try Array(text.utf8).withUnsafeBytes { try from.write($0) }
        from.takeCiphertext { to.receive($0) }
        return try Self.readAll(to)
    }

    static func readAll(_ session: TLSSession) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case .bytes(let count) = try buffer.withUnsafeMutableBytes({ try session.read(into: $0) }) {
            received += buffer[..<count]
        }
        return received
    }
}
#endif
