#if os(Linux)
import COpenSSL
import Synchronization
import TetherWire

/// A configured OpenSSL context (`SSL_CTX`) from which `TLSSession`s are made: TLS 1.2 or later, and for a client
/// verification against the system trust store (plus any additional roots) unless explicitly skipped.
///
/// Create one per configuration and share it: building a context reads the trust store, which costs far more than
/// a session.
package final class TLSContext: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `pointer` is configured completely in the initializer and never changed
    // afterwards; OpenSSL documents `SSL_new` on a shared, no longer modified `SSL_CTX` as safe from any thread
    // (its reference count and lazily loaded lookup caches are internally locked). `pins`, `verifies` and
    // `resumesSessions` are immutable. `unguardedSessions` is touched only inside `withSessions`, which holds
    // `sessionLock` for the whole access; the `SSL_SESSION`s in it are reference counted with atomics and not
    // changed once made, and OpenSSL's own caches share them between threads the same way.
    let pointer: OpaquePointer
    /// The base64 SHA-256 digests of accepted SPKIs (without the `sha256/` prefix).
    let pins: Set<String>
    /// A client context that verifies the chain and the host name.
    let verifies: Bool
    let isServer: Bool
    /// A client context that keeps sessions in `sessions` and offers them (`TLSClientOptions.sessionResumption`).
    let resumesSessions: Bool
    private let sessionLock = Mutex(())
    /// The client's resumable sessions, only this context's own: a session verified under other trust roots,
    /// pins or verification setting is never offered here. Only inside `withSessions`.
    private var unguardedSessions: TLSSessionCache

    /// How many servers a client context keeps a session for.
    package static let sessionCacheCapacity = 8

    private init(pointer: OpaquePointer, pins: Set<String>, verifies: Bool, isServer: Bool, resumesSessions: Bool) {
        self.pointer = pointer
        self.pins = pins
        self.verifies = verifies
        self.isServer = isServer
        self.resumesSessions = resumesSessions
        self.unguardedSessions = TLSSessionCache(capacity: Self.sessionCacheCapacity)
    }

    deinit {
        // Every `TLSSession` holds its context: no `SSL` made from it is left. The cached sessions are freed with
        // `unguardedSessions`.
        SSL_CTX_free(self.pointer)
    }

    /// Runs `body` with the session cache, under its lock.
    func withSessions<Result>(_ body: (inout TLSSessionCache) -> Result) -> Result {
        self.sessionLock.withLock { _ in body(&self.unguardedSessions) }
    }

    /// How many sessions the context keeps (for tests).
    package var cachedSessionCount: Int { self.withSessions { $0.count } }

    /// A client context.
    /// - Throws: `TLSConfigurationError` for a malformed pin or unreadable trust roots.
    package static func client(_ options: TLSClientOptions) throws(TLSConfigurationError) -> TLSContext {
        let pins = try Self.parsePins(options.pins)
        let context = try Self.makeContext(method: TLS_client_method())
        let verifies = !options.insecureSkipVerification
        // The context owns the pointer from here on, so an error below frees it.
        let result = TLSContext(
            pointer: context, pins: pins, verifies: verifies, isServer: false,
            resumesSessions: options.sessionResumption)
        if options.sessionResumption {
            // OpenSSL hands each new session to `TLSSession`'s callback, which decides what `sessions` keeps;
            // OpenSSL keeps none itself (its client cache would not be keyed by server).
            _ = tether_SSL_CTX_set_session_cache_mode(
                context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
            SSL_CTX_sess_set_new_cb(context) { ssl, session in TLSSession.sessionIssued(ssl: ssl, session: session) }
        } else {
            _ = tether_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
            tether_SSL_CTX_disable_tickets(context)
        }
        if verifies {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw .contextUnavailable }
            let store = SSL_CTX_get_cert_store(context)
            for source in options.additionalTrustRoots {
                let certificates = try PEM.certificates(source, failure: .invalidTrustRoots)
                for certificate in certificates {
                    defer { X509_free(certificate) }
                    // A root already in the store is not an error.
                    _ = X509_STORE_add_cert(store, certificate)
                }
            }
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        // Notes on the session that the server asked for a certificate: its failure can then be told apart.
        SSL_CTX_set_cert_cb(context, { ssl, _ in TLSSession.certificateRequested(ssl: ssl) }, nil)
        if let identity = options.clientIdentity { try Self.use(identity, in: context) }
        ERR_clear_error()
        return result
    }

    /// Checks that `identity` can be used (its chain and key read, the key decrypted and matching the
    /// certificate), without keeping anything.
    /// - Throws: the `TLSConfigurationError` that creating a client context with it would throw.
    package static func check(_ identity: TLSClientIdentity) throws(TLSConfigurationError) {
        let context = try Self.makeContext(method: TLS_client_method())
        defer { SSL_CTX_free(context) }
        try Self.use(identity, in: context)
    }

    /// Sets `identity`'s certificate chain and key on a client context.
    private static func use(_ identity: TLSClientIdentity, in context: OpaquePointer) throws(TLSConfigurationError) {
        let key: OpaquePointer
        switch identity.form {
        case .pem(let chain, let privateKey):
            try Self.useChain(chain, in: context, failure: .invalidClientCertificate)
            switch PEM.privateKey(privateKey, passphrase: identity.passphrase) {
            case .key(let read): key = read
            case .unreadable: throw .invalidClientKey
            case .passphraseRefused: throw .clientKeyPassphrase
            }
        case .pkcs12(let archive):
            key = try Self.usePKCS12(archive, passphrase: identity.passphrase ?? "", in: context)
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            ERR_clear_error()
            throw .clientKeyMismatch
        }
    }

    /// Sets the certificate and chain of a PKCS#12 archive on a client context; returns its key (the caller frees
    /// it).
    private static func usePKCS12(
        _ source: PEMSource, passphrase: String, in context: OpaquePointer
    ) throws(TLSConfigurationError) -> OpaquePointer {
        guard let bio = PEM.bio(source) else {
            ERR_clear_error()
            throw .invalidClientArchive
        }
        defer { BIO_free(bio) }
        guard let archive = d2i_PKCS12_bio(bio, nil) else {
            ERR_clear_error()
            throw .invalidClientArchive
        }
        defer { PKCS12_free(archive) }
        guard PKCS12_verify_mac(archive, passphrase, Int32(passphrase.utf8.count)) == 1 else {
            ERR_clear_error()
            throw .clientKeyPassphrase
        }
        var key: OpaquePointer?
        var leaf: OpaquePointer?
        var chain: OpaquePointer?
        let parsed = PKCS12_parse(archive, passphrase, &key, &leaf, &chain)
        defer {
            X509_free(leaf)
            tether_X509_chain_free(chain)
        }
        guard parsed == 1, let key, let leaf else {
            EVP_PKEY_free(key)
            ERR_clear_error()
            throw .invalidClientArchive
        }
        var usable = SSL_CTX_use_certificate(context, leaf) == 1
        for index in 0..<tether_X509_chain_count(chain) where usable {
            // The context takes over a reference of its own only on success.
            guard let certificate = tether_X509_chain_at(chain, index), X509_up_ref(certificate) == 1 else { continue }
            if tether_SSL_CTX_add_extra_chain_cert(context, certificate) != 1 {
                X509_free(certificate)
                usable = false
            }
        }
        guard usable else {
            EVP_PKEY_free(key)
            ERR_clear_error()
            throw .invalidClientArchive
        }
        return key
    }

    /// Sets the leaf of `source` as the context's certificate and the rest as its chain.
    private static func useChain(
        _ source: PEMSource, in context: OpaquePointer, failure: TLSConfigurationError
    ) throws(TLSConfigurationError) {
        var certificates = try PEM.certificates(source, failure: failure)
        let leaf = certificates.removeFirst()
        defer { X509_free(leaf) }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            certificates.forEach { X509_free($0) }
            ERR_clear_error()
            throw failure
        }
        for (index, intermediate) in certificates.enumerated() where
            tether_SSL_CTX_add_extra_chain_cert(context, intermediate) != 1
        {
            // Ownership passes to the context only on success.
            certificates[index...].forEach { X509_free($0) }
            ERR_clear_error()
            throw failure
        }
    }

    /// A client context for `options`, shared with every caller asking for the same options while one of them
    /// still holds it (a context reads the trust store and the additional roots once, when first created, and keeps
    /// the sessions its servers issue). The process holds the 16 most recently asked for; any other lives only as
    /// long as a connection or a `TLSContextKeeper` holds it, which is how a client that reconnects finds its own
    /// sessions again however many other option sets the process uses meanwhile.
    package static func sharedClient(_ options: TLSClientOptions) throws(TLSConfigurationError) -> TLSContext {
        let context: TLSContext
        if let cached = Self.clientCache.withLock({ $0[options]?.context }) {
            context = cached
        } else {
            let made = try Self.client(options)
            context = Self.clientCache.withLock { cache in
                // Another caller may have made one meanwhile: everyone shares the first.
                if let first = cache[options]?.context { return first }
                cache = cache.filter { $0.value.context != nil }
                cache[options] = WeakContext(context: made)
                return made
            }
        }
        Self.recentlyUsed.keep(context, for: options)
        return context
    }

    private struct WeakContext: Sendable {
        weak var context: TLSContext?
    }

    private static let clientCache = Mutex<[TLSClientOptions: WeakContext]>([:])
    private static let recentlyUsed = TLSContextKeeper(capacity: 16)

    /// A server context presenting `options`' certificate chain and key.
    /// - Throws: `TLSConfigurationError` when the chain or the key cannot be read or do not match.
    package static func server(_ options: TLSServerOptions) throws(TLSConfigurationError) -> TLSContext {
        let context = try Self.makeContext(method: TLS_server_method())
        let result = TLSContext(pointer: context, pins: [], verifies: false, isServer: true, resumesSessions: false)
        // Resumption: TLS 1.3 tickets and TLS 1.2 tickets are on by default (stateless, sealed with the context's
        // own key, which lives as long as the context); the stateful cache for TLS 1.2 session IDs is bounded.
        let sessionIDContext: [UInt8] = Array("tether".utf8)
        guard SSL_CTX_set_session_id_context(context, sessionIDContext, UInt32(sessionIDContext.count)) == 1 else {
            throw .contextUnavailable
        }
        _ = tether_SSL_CTX_sess_set_cache_size(context, 1_024)
        if options.tls12OnlyForTesting {
            guard tether_SSL_CTX_set_max_proto_version(context, TLS1_2_VERSION) == 1 else {
                throw .contextUnavailable
            }
        }
        if options.legacyVersionsOnlyForTesting {
            // OpenSSL 3 allows TLS 1.0 and 1.1 only at security level 0; without it the server has no version.
            SSL_CTX_set_security_level(context, 0)
            guard tether_SSL_CTX_set_min_proto_version(context, TLS1_VERSION) == 1,
                tether_SSL_CTX_set_max_proto_version(context, TLS1_1_VERSION) == 1
            else { throw .contextUnavailable }
        }
        try Self.useChain(options.certificateChain, in: context, failure: .invalidCertificate)
        if let authorities = options.clientCertificateAuthorities {
            try Self.requireClientCertificates(from: authorities, in: context)
        }
        guard case .key(let key) = PEM.privateKey(options.privateKey, passphrase: nil) else {
            throw .invalidPrivateKey
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            ERR_clear_error()
            throw .invalidPrivateKey
        }
        ERR_clear_error()
        return result
    }

    /// Makes a server context require a client certificate that chains to one of `authorities`, whose names
    /// its certificate request lists.
    private static func requireClientCertificates(
        from authorities: PEMSource, in context: OpaquePointer
    ) throws(TLSConfigurationError) {
        let certificates = try PEM.certificates(authorities, failure: .invalidClientCertificateAuthorities)
        let store = SSL_CTX_get_cert_store(context)
        for certificate in certificates {
            defer { X509_free(certificate) }
            _ = X509_STORE_add_cert(store, certificate)
            guard SSL_CTX_add_client_CA(context, certificate) == 1 else {
                ERR_clear_error()
                throw .invalidClientCertificateAuthorities
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    }

    private static func makeContext(method: OpaquePointer?) throws(TLSConfigurationError) -> OpaquePointer {
        guard let context = SSL_CTX_new(method) else {
            ERR_clear_error()
            throw .contextUnavailable
        }
        guard tether_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            SSL_CTX_free(context)
            throw .contextUnavailable
        }
        // Idle connections keep no record buffers; renegotiation (TLS 1.2) is refused.
        _ = tether_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        tether_SSL_CTX_refuse_renegotiation(context)
        return context
    }

    /// Checks each pin's form (`SPKIPin`) and returns the base64 digests.
    static func parsePins(_ pins: [String]) throws(TLSConfigurationError) -> Set<String> {
        var digests = Set<String>()
        for pin in pins {
            guard let digest = SPKIPin.digest(of: pin) else { throw .invalidPin }
            digests.insert(digest.base64)
        }
        return digests
    }
}

/// Reading PEM into OpenSSL objects.
package enum PEM {
    /// A memory or file BIO over `source`; nil when the file cannot be opened.
    static func bio(_ source: PEMSource) -> OpaquePointer? {
        switch source {
        case .file(let path):
            return BIO_new_file(path, "r")
        case .bytes(let bytes):
            guard let bio = BIO_new(BIO_s_mem()) else { return nil }
            let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
            guard written == bytes.count || bytes.isEmpty else {
                BIO_free(bio)
                return nil
            }
            return bio
        }
    }

    /// Every certificate in `source`, in order (the caller frees them); at least one.
    package static func certificates(
        _ source: PEMSource, failure: TLSConfigurationError
    ) throws(TLSConfigurationError) -> [OpaquePointer] {
        guard let bio = Self.bio(source) else {
            ERR_clear_error()
            throw failure
        }
        defer { BIO_free(bio) }
        var certificates: [OpaquePointer] = []
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates.append(certificate)
        }
        ERR_clear_error()  // the end of the input is reported as an error
        guard !certificates.isEmpty else { throw failure }
        return certificates
    }

    /// What reading a private key gave.
    package enum KeyRead {
        /// The key, which the caller frees.
        case key(OpaquePointer)
        /// No PEM private key could be read (an unreadable file, no key in it).
        case unreadable
        /// The key is encrypted, and the passphrase is missing or does not decrypt it.
        case passphraseRefused
    }

    /// The first private key in `source`, decrypted with `passphrase` when it is encrypted. The passphrase is
    /// copied only into OpenSSL's own buffer, for the duration of the read, and never to a terminal prompt: a key
    /// that is encrypted without a passphrase given is refused.
    package static func privateKey(_ source: PEMSource, passphrase: String?) -> KeyRead {
        guard let bio = Self.bio(source) else {
            ERR_clear_error()
            return .unreadable
        }
        defer { BIO_free(bio) }
        var request = PassphraseRequest(passphrase: passphrase.map { Array($0.utf8) })
        let key = withUnsafeMutablePointer(to: &request) { pointer in
            PEM_read_bio_PrivateKey(bio, nil, { buffer, size, _, userdata in
                guard let buffer, let userdata else { return -1 }
                let request = userdata.assumingMemoryBound(to: PassphraseRequest.self)
                request.pointee.asked = true
                guard let passphrase = request.pointee.passphrase, passphrase.count <= Int(size) else { return -1 }
                passphrase.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count)
                }
                return Int32(passphrase.count)
            }, pointer)
        }
        // Our copy is overwritten (OpenSSL cleanses its own buffer).
        if let count = request.passphrase?.count { request.passphrase = [UInt8](repeating: 0, count: count) }
        ERR_clear_error()
        if let key { return .key(key) }
        return request.asked ? .passphraseRefused : .unreadable
    }

    /// The passphrase handed to OpenSSL's password callback, and whether it was asked for (the key is encrypted).
    private struct PassphraseRequest {
        var passphrase: [UInt8]?
        var asked = false
    }
}
#endif
