#if os(Linux)
import COpenSSL
import Synchronization
import Testing
@testable import TetherPOSIX
import TetherTestServer

/// Sessions of the test below marked with `Marked.index`; counted when OpenSSL frees them.
private enum Marked {
    static let freed = Atomic<Int>(0)
    static let index = tether_SSL_SESSION_get_ex_new_index { _, data, _, _, _, _ in
        if data != nil { Marked.freed.add(1, ordering: .relaxed) }
    }

    /// A fresh session of `version` with a session ID (resumable, as far as the cache looks), marked.
    static func session(version: Int32) -> OpaquePointer {
        let session = SSL_SESSION_new()!
        _ = SSL_SESSION_set_protocol_version(session, version)
        let id = [UInt8](repeating: 7, count: 32)
        _ = SSL_SESSION_set1_id(session, id, UInt32(id.count))
        _ = SSL_SESSION_set_ex_data(session, Self.index, UnsafeMutableRawPointer(bitPattern: 1))
        return session
    }
}

@Suite struct TLSSessionResumptionTests {
    static let authority = TestCertificateAuthority()
    static let trusting = TLSClientOptions(additionalTrustRoots: [.bytes(Self.authority.certificate.certificatePEM)])

    private static func server(
        tls12Only: Bool = false, certificate: TestCertificate = Self.authority.issue()
    ) throws -> TLSContext {
        var options = certificate.serverOptions
        options.tls12OnlyForTesting = tls12Only
        return try TLSContext.server(options)
    }

    @Test(arguments: [false, true])
    func theSecondHandshakeOffersTheSavedSessionAndResumes(tls12Only: Bool) throws {
        let client = try TLSContext.client(Self.trusting)
        let server = try Self.server(tls12Only: tls12Only)
        let first = TLSPair(client, server)
        #expect(first.connect())
        #expect(!first.client.isResumed && !first.server.isResumed)
        #expect(client.cachedSessionCount == 1)

        let second = TLSPair(client, server)
        // A TLS 1.3 ticket is used once: it left the cache when offered. A TLS 1.2 session stays.
        #expect(client.cachedSessionCount == (tls12Only ? 1 : 0))
        #expect(second.connect())
        #expect(second.client.isResumed && second.server.isResumed)
        // The resumed connection brought the next ticket (TLS 1.3), or kept its session (TLS 1.2).
        #expect(client.cachedSessionCount == 1)
        let third = TLSPair(client, server)
        #expect(third.connect() && third.client.isResumed)
    }

    @Test(arguments: [false, true])
    func aConnectionDroppedWithoutCloseNotifyLeavesItsSessionResumable(tls12Only: Bool) throws {
        let client = try TLSContext.client(Self.trusting)
        let server = try Self.server(tls12Only: tls12Only)
        do {
            let dropped = TLSPair(client, server)
            #expect(dropped.connect())
        }  // gone without a close_notify, as when the network drops
        let reconnect = TLSPair(client, server)
        #expect(reconnect.connect() && reconnect.client.isResumed)
    }

    @Test func aResumedSessionUnderPinsNeedsNoCertificateAndThePinsWereCheckedWhenItWasMade() throws {
        // The CA's pin matches only in the verified chain, which a resumed handshake does not have.
        var pinned = Self.trusting
        pinned.pins = [Self.authority.certificate.pin]
        let client = try TLSContext.client(pinned)
        let server = try Self.server()
        let first = TLSPair(client, server)
        #expect(first.connect())
        let second = TLSPair(client, server)
        #expect(second.connect() && second.client.isResumed)
    }

    @Test func aPinMismatchKeepsNoSessionFromThatHandshake() throws {
        var pinned = Self.trusting
        pinned.pins = [TestCertificateAuthority.selfSigned().pin]
        let client = try TLSContext.client(pinned)
        for tls12Only in [false, true] {
            let connection = TLSPair(client, try Self.server(tls12Only: tls12Only))
            #expect(!connection.connect())
            #expect(connection.clientFailure == .pinMismatch)
            #expect(client.cachedSessionCount == 0)
        }
    }

    @Test(arguments: [false, true])
    func aSessionIsOfferedOnlyByItsContextForItsServerNameAndPort(tls12Only: Bool) throws {
        let client = try TLSContext.client(Self.trusting)
        let server = try Self.server(tls12Only: tls12Only)
        let first = TLSPair(client, server)
        #expect(first.connect() && client.cachedSessionCount == 1)

        // Other verification settings are other contexts, whose caches are their own.
        var pinned = Self.trusting
        pinned.pins = [Self.authority.certificate.pin]
        for options in [Self.trusting, pinned, TLSClientOptions(insecureSkipVerification: true)] {
            let other = try TLSContext.client(options)
            let connection = TLSPair(other, server)
            #expect(connection.connect())
            #expect(!connection.client.isResumed && !connection.server.isResumed)
        }
        // Another port or another name of the same server.
        let otherPort = TLSPair(client, server, port: 8443)
        #expect(otherPort.connect() && !otherPort.client.isResumed)
        let otherName = TLSPair(client, server, serverName: "127.0.0.1")
        #expect(otherName.connect() && !otherName.client.isResumed)
        #expect(client.cachedSessionCount == 3)
    }

    @Test(arguments: [false, true])
    func aSessionTheServerCannotResumeFallsBackToAFullHandshake(tls12Only: Bool) throws {
        let client = try TLSContext.client(Self.trusting)
        let first = TLSPair(client, try Self.server(tls12Only: tls12Only))
        #expect(first.connect())
        // Another server context: another ticket key and session cache, the same certificate authority.
        let second = TLSPair(client, try Self.server(tls12Only: tls12Only))
        #expect(second.connect())
        #expect(!second.client.isResumed && !second.server.isResumed)
        #expect(client.cachedSessionCount == 1)
    }

    @Test func aFailedHandshakeWithASessionRemovesIt() throws {
        // TLS 1.2: its session stays in the cache when offered, until a handshake with it fails.
        let client = try TLSContext.client(Self.trusting)
        let first = TLSPair(client, try Self.server(tls12Only: true))
        #expect(first.connect() && client.cachedSessionCount == 1)
        let expired = Self.authority.issue(notBefore: -2 * 86_400, notAfter: -86_400)
        let second = TLSPair(client, try Self.server(tls12Only: true, certificate: expired))
        #expect(!second.connect())
        #expect(second.clientFailure == .certificateExpired)
        #expect(client.cachedSessionCount == 0)
    }

    @Test func withoutSessionResumptionNothingIsKeptOrOffered() throws {
        var options = Self.trusting
        options.sessionResumption = false
        let client = try TLSContext.client(options)
        let server = try Self.server()
        let first = TLSPair(client, server)
        #expect(first.connect())
        let second = TLSPair(client, server)
        #expect(second.connect() && !second.client.isResumed)
        #expect(client.cachedSessionCount == 0)
    }

    @Test func theContextKeepsSessionsForAtMostItsCapacityOfServersTheLeastRecentlyUsedLeaving() throws {
        let client = try TLSContext.client(Self.trusting)
        let server = try Self.server(tls12Only: true)
        let capacity = TLSContext.sessionCacheCapacity
        for port in 1...capacity + 2 {
            let connection = TLSPair(client, server, port: port)
            #expect(connection.connect())
            #expect(client.cachedSessionCount == min(port, capacity))
        }
        let oldest = TLSPair(client, server, port: 1)
        #expect(oldest.connect() && !oldest.client.isResumed)
        let kept = TLSPair(client, server, port: capacity + 2)
        #expect(kept.connect() && kept.client.isResumed)
        #expect(client.cachedSessionCount == capacity)
    }

    @Test func theCacheFreesEverySessionItDropsAndTheRestWithItself() {
        let before = Marked.freed.load(ordering: .relaxed)
        let key = TLSSessionCache.Key(serverName: "localhost", port: 443)
        do {
            var cache = TLSSessionCache(capacity: 4)
            for port in 1...6 {
                cache.store(Marked.session(version: TLS1_2_VERSION), for: .init(serverName: "localhost", port: port))
            }
            #expect(cache.count == 4)
            #expect(Marked.freed.load(ordering: .relaxed) - before == 2)  // ports 1 and 2, evicted
            // A newer session for a server replaces (and frees) its older one.
            cache.store(Marked.session(version: TLS1_3_VERSION), for: key)
            cache.store(Marked.session(version: TLS1_3_VERSION), for: key)
            #expect(cache.count == 4)
            #expect(Marked.freed.load(ordering: .relaxed) - before == 4)  // port 3 evicted, the first 443 replaced
            // TLS 1.3: taken out, once.
            let ticket = cache.take(for: key, now: Int(time(nil)))
            #expect(ticket != nil && cache.take(for: key, now: Int(time(nil))) == nil)
            SSL_SESSION_free(ticket)
            // TLS 1.2: a reference of the caller's own; the session stays until it is removed.
            let port6 = TLSSessionCache.Key(serverName: "localhost", port: 6)
            let session = cache.take(for: port6, now: Int(time(nil)))
            #expect(session != nil && cache.count == 3)
            cache.remove(session!, for: port6)
            #expect(cache.count == 2)
            SSL_SESSION_free(session)
            // Expired: freed instead of offered.
            let port5 = TLSSessionCache.Key(serverName: "localhost", port: 5)
            #expect(cache.take(for: port5, now: Int(time(nil)) + 86_400) == nil && cache.count == 1)
            #expect(Marked.freed.load(ordering: .relaxed) - before == 7)
        }
        #expect(Marked.freed.load(ordering: .relaxed) - before == 8)  // all of them
    }
}
#endif
