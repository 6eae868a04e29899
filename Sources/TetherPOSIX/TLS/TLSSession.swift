#if os(Linux)
import COpenSSL
import Glibc

/// One TLS connection as a sans-I/O engine over two BIOs: ciphertext from the peer goes in with
/// `receive(_:)`, plaintext comes out of `read(into:)`; plaintext goes in with `write(_:)`, and the ciphertext to
/// send comes out of `takeCiphertext()`. The handshake advances with `handshake()`; `shutdown()` queues a
/// `close_notify`. Nothing here touches a socket or a clock.
///
/// Not thread-safe: one owner at a time (a loop thread, or a lock around every call). OpenSSL's error queue is per
/// thread, so every call clears it first and reads it before returning.
package final class TLSSession {
    /// What `read(into:)` produced.
    package enum ReadResult: Equatable, Sendable {
        /// This many plaintext bytes were written to the buffer.
        case bytes(Int)
        /// More ciphertext is needed.
        case needMore
        /// The peer sent `close_notify`: no more plaintext will come.
        case closed
    }

    private let context: TLSContext
    private let ssl: OpaquePointer
    /// Ciphertext from the peer, read by OpenSSL. Owned by `ssl`.
    private let inbound: OpaquePointer
    /// Ciphertext for the peer, written by OpenSSL into `sink`. Owned by `ssl`.
    private let outbound: OpaquePointer
    /// Where `outbound` puts the records: an array handed over whole, with no copy out of a memory BIO.
    private let sink = CiphertextSink()
    /// The handshake (and, for a client, the pin check) has completed.
    package private(set) var isHandshakeComplete = false
    /// The peer's `close_notify` was read.
    package private(set) var receivedCloseNotify = false
    /// The handshake resumed an earlier session (an abbreviated handshake, without a certificate): for a client,
    /// a session its context kept; for a server, a ticket or session it issued. Known once the handshake completed.
    package private(set) var isResumed = false
    /// A client's server, under which its context keeps sessions; nil for a server or without resumption.
    private let resumptionKey: TLSSessionCache.Key?
    /// The peer's certificate subject (RFC 2253, for example `CN=device-7,O=Example`) once the handshake
    /// completed: for a server that requires client certificates, the client's; nil without one.
    package private(set) var peerCertificateSubject: String?
    /// A client's server asked for a certificate (mutual TLS) during the handshake: a handshake failure or an alert
    /// that follows is about our certificate, or our lack of one.
    private var serverRequestedCertificate = false
    /// The session a client offered (one reference, ours), until the handshake ends: on a failure, it leaves the
    /// cache. Holding the reference keeps its address from being reused by another session meanwhile.
    private var offeredSession: OpaquePointer?
    /// Why the session cannot start (OpenSSL refused the host check): `handshake()` throws it before any byte.
    private var setupFailure: TLSFailure?

    /// A client session for `serverName` (a host name, or an IP literal without brackets): SNI carries a host
    /// name (never an IP literal), and verification, when the context verifies, checks the name or the address.
    /// - Parameter port: the server's port, which with `serverName` names the server whose latest session the
    ///   context offers and keeps (when it resumes sessions). Default 443.
    package convenience init(context: TLSContext, serverName: String, port: Int = 443) {
        precondition(!context.isServer, "a client session needs a client context")
        let key = context.resumesSessions ? TLSSessionCache.Key(serverName: serverName, port: port) : nil
        self.init(context: context, resumptionKey: key)
        SSL_set_connect_state(self.ssl)
        let isAddress = Self.isIPAddress(serverName)
        if !isAddress { _ = tether_SSL_set_tlsext_host_name(self.ssl, serverName) }
        if context.verifies {
            let parameters = SSL_get0_param(self.ssl)
            // Fail closed: a name or address OpenSSL refuses would otherwise leave the check out silently.
            let accepted: Bool
            if isAddress {
                accepted = X509_VERIFY_PARAM_set1_ip_asc(parameters, serverName) == 1
            } else {
                X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                // With its length, so that a name with an embedded NUL is refused rather than cut short.
                var name = serverName
                accepted = name.withUTF8 { utf8 in
                    // An empty name has no storage: OpenSSL then takes the (empty) C string's length.
                    guard let start = UnsafeRawPointer(utf8.baseAddress) else {
                        return X509_VERIFY_PARAM_set1_host(parameters, "", 0) == 1
                    }
                    return X509_VERIFY_PARAM_set1_host(
                        parameters, start.assumingMemoryBound(to: CChar.self), utf8.count) == 1
                }
            }
            if !accepted { self.setupFailure = .hostCheckUnavailable }
        }
        if let key {
            let now = Int(time(nil))
            if let session = context.withSessions({ $0.take(for: key, now: now) }) {
                // The SSL takes a reference of its own; ours stays in `offeredSession` until the handshake ends.
                if SSL_set_session(self.ssl, session) == 1 {
                    self.offeredSession = session
                } else {
                    SSL_SESSION_free(session)
                }
            }
        }
        ERR_clear_error()
    }

    /// A server session.
    package convenience init(serverContext context: TLSContext) {
        precondition(context.isServer, "a server session needs a server context")
        self.init(context: context, resumptionKey: nil)
        SSL_set_accept_state(self.ssl)
    }

    private init(context: TLSContext, resumptionKey: TLSSessionCache.Key?) {
        self.context = context
        self.resumptionKey = resumptionKey
        guard let ssl = SSL_new(context.pointer), let inbound = BIO_new(BIO_s_mem()),
            let outbound = BIO_new(CiphertextSink.method.pointer)
        else {
            // Only out of memory.
            fatalError("OpenSSL could not allocate a session")
        }
        self.ssl = ssl
        self.inbound = inbound
        self.outbound = outbound
        // The sink outlives the BIO: `SSL_free` (in `deinit`) frees the BIO before the stored properties go.
        BIO_set_data(outbound, Unmanaged.passUnretained(self.sink).toOpaque())
        SSL_set_bio(ssl, inbound, outbound)
        if !context.isServer {
            // For `sessionIssued` and `certificateRequested`; see there why the unretained pointer is valid whenever
            // OpenSSL reads it.
            _ = SSL_set_ex_data(ssl, Self.ownerIndex, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    deinit {
        // No callback may find this object any more, even from within `SSL_free`.
        _ = SSL_set_ex_data(self.ssl, Self.ownerIndex, nil)
        // Freed without our close_notify (the connection dropped, or was reset), OpenSSL would mark the session
        // not resumable: the very reconnect resumption is for. TLS 1.1 and later allow resuming after an
        // improper close (RFC 5246, 7.2.1); a fatal alert, sent or received, has already marked it for good.
        SSL_set_shutdown(self.ssl, SSL_get_shutdown(self.ssl) | SSL_SENT_SHUTDOWN)
        SSL_free(self.ssl)  // frees both BIOs
        if let offered = self.offeredSession { SSL_SESSION_free(offered) }
    }

    // MARK: - Ciphertext

    /// Ciphertext from the peer, in order. Kept in memory until `handshake()` or `read(into:)` consumes it.
    package func receive(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, !ciphertext.isEmpty else { return }
        // A memory BIO takes everything (it grows).
        _ = BIO_write(self.inbound, base, Int32(ciphertext.count))
    }

    /// Ciphertext received and not yet decrypted.
    package var bufferedCiphertext: Int { Int(BIO_ctrl_pending(self.inbound)) }

    /// Whether `read(into:)` could make progress: ciphertext received and not yet decrypted, or a record OpenSSL has
    /// taken in and not yet handed out. When false, a read only reports that it needs more.
    package var hasInput: Bool { self.bufferedCiphertext > 0 || SSL_has_pending(self.ssl) == 1 }

    /// Ciphertext waiting to be sent.
    package var pendingCiphertext: Int { self.sink.bytes.count }

    /// Hands the ciphertext waiting to be sent to `body` (borrowed for the call), then forgets it.
    package func takeCiphertext(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard !self.sink.bytes.isEmpty else { return }
        self.sink.bytes.withUnsafeBytes(body)
        self.sink.bytes.removeAll(keepingCapacity: true)
    }

    /// The ciphertext waiting to be sent (empty when none), which is then forgotten: the array itself, no copy.
    package func takeCiphertext() -> [UInt8] {
        guard !self.sink.bytes.isEmpty else { return [] }
        defer { self.sink.bytes = [] }
        return self.sink.bytes
    }

    // MARK: - Handshake

    /// Advances the handshake with the ciphertext received so far; afterwards, `takeCiphertext` has what to send.
    /// - Returns: true once the handshake has completed (and for a client, the pins matched).
    /// - Throws: `TLSFailure` when the handshake failed (its alert, if any, is in `takeCiphertext`).
    package func handshake() throws(TLSFailure) -> Bool {
        guard !self.isHandshakeComplete else { return true }
        if let failure = self.setupFailure { throw failure }
        ERR_clear_error()
        let result = SSL_do_handshake(self.ssl)
        if result == 1 {
            self.isResumed = SSL_session_reused(self.ssl) == 1
            // A resumed session carries no certificate to check: it is one this context kept after a full
            // handshake with the same server name and port passed the same verification and pins (a session is
            // kept only from then on, see `keepSession`), and OpenSSL resumes only with the server holding its key.
            if !self.context.isServer, !self.isResumed, !self.context.pins.isEmpty, !self.chainMatchesPins() {
                self.forgetOfferedSession(failed: true)
                throw .pinMismatch
            }
            self.isHandshakeComplete = true
            self.peerCertificateSubject = self.peerSubject()
            self.forgetOfferedSession(failed: false)
            // A TLS 1.2 session is made by the handshake, before the pins were checked: the callback passed it
            // over (see `sessionIssued`), so it is kept now. A TLS 1.3 one is not resumable yet: its tickets come
            // after the handshake, to the callback.
            if self.resumptionKey != nil, let session = SSL_get1_session(self.ssl) {
                if SSL_SESSION_get_protocol_version(session) < TLS1_3_VERSION {
                    self.keepSession(session)
                } else {
                    // A TLS 1.3 session here is one without a ticket yet, or (resumed) the one just used.
                    SSL_SESSION_free(session)
                }
            }
            return true
        }
        let code = SSL_get_error(self.ssl, result)
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { return false }
        self.forgetOfferedSession(failed: true)
        throw self.handshakeFailure()
    }

    // MARK: - Resumption

    /// The `SSL` ex_data slot holding a client session's unretained `TLSSession` (for `sessionIssued` and
    /// `certificateRequested`).
    private static let ownerIndex = tether_SSL_get_ex_new_index()

    /// OpenSSL's new-session callback on a client context that resumes sessions: a server issued `session` on
    /// `ssl` (during a TLS 1.2 handshake, or in a TLS 1.3 ticket after it). Always returns 0: the reference
    /// OpenSSL passed stays OpenSSL's (it frees it); a session kept takes a reference of its own.
    ///
    /// Why the unretained pointer read here is valid: the ex_data slot is set in `init` to the `TLSSession` that
    /// owns `ssl` and cleared in its `deinit` before `SSL_free`. OpenSSL runs this callback only synchronously,
    /// inside `SSL_do_handshake` or `SSL_read_ex` on this `ssl`, and only a `TLSSession` method calls those on its
    /// own private `ssl`: the owner is executing, so it is alive (a method's `self` is retained for the call). The
    /// callback runs within that call, on its thread and under whatever exclusion its caller holds (one owner, or
    /// `TLSStream`'s lock), so it touches the owner's state as the method itself would.
    static func sessionIssued(ssl: OpaquePointer?, session: OpaquePointer?) -> Int32 {
        guard let ssl, let session, let owner = SSL_get_ex_data(ssl, Self.ownerIndex) else { return 0 }
        let client = Unmanaged<TLSSession>.fromOpaque(owner).takeUnretainedValue()
        // Before the handshake has completed the pins are unchecked: `handshake()` keeps the session afterwards.
        guard client.isHandshakeComplete else { return 0 }
        SSL_SESSION_up_ref(session)
        client.keepSession(session)
        return 0
    }

    /// OpenSSL's certificate callback on a client context: the server sent a certificate request. Notes it on the
    /// session (the unretained owner is valid here for the reasons given at `sessionIssued`: this runs synchronously
    /// inside `SSL_do_handshake` on the owner's `ssl`) and lets the handshake go on with the context's identity, or
    /// none. Returns 1 (go on).
    static func certificateRequested(ssl: OpaquePointer?) -> Int32 {
        guard let ssl, let owner = SSL_get_ex_data(ssl, Self.ownerIndex) else { return 1 }
        Unmanaged<TLSSession>.fromOpaque(owner).takeUnretainedValue().serverRequestedCertificate = true
        return 1
    }

    /// Keeps `session` (our reference, taken over) as the server's latest, if it can be resumed.
    private func keepSession(_ session: OpaquePointer) {
        guard let key = self.resumptionKey, SSL_SESSION_is_resumable(session) == 1 else {
            SSL_SESSION_free(session)
            return
        }
        self.context.withSessions { $0.store(session, for: key) }
    }

    /// Lets go of the offered session at the end of the handshake; after a failure it leaves the cache too.
    private func forgetOfferedSession(failed: Bool) {
        guard let offered = self.offeredSession else { return }
        self.offeredSession = nil
        if failed, let key = self.resumptionKey {
            self.context.withSessions { $0.remove(offered, for: key) }
        }
        SSL_SESSION_free(offered)
    }

    // MARK: - Application data

    /// Decrypts plaintext into `buffer`, as much as is available and fits.
    /// - Throws: `TLSFailure.protocolError` for a bad record or a fatal alert.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSFailure) -> ReadResult {
        guard !self.receivedCloseNotify else { return .closed }
        ERR_clear_error()
        var count = 0
        if SSL_read_ex(self.ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        switch SSL_get_error(self.ssl, 0) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .needMore
        case SSL_ERROR_ZERO_RETURN:
            self.receivedCloseNotify = true
            return .closed
        default:
            // With TLS 1.3 the server checks our certificate after our side of the handshake completed: its refusal
            // comes as an alert on the first read.
            if let refusal = self.clientCertificateRefusal() {
                ERR_clear_error()
                throw refusal
            }
            throw .protocolError(Self.reasonText())
        }
    }

    /// Encrypts all of `plaintext` (after the handshake); the records are then in `takeCiphertext`.
    /// - Throws: `TLSFailure.protocolError` when the session can no longer write (after a fatal error).
    package func write(_ plaintext: UnsafeRawBufferPointer) throws(TLSFailure) {
        guard let base = plaintext.baseAddress, !plaintext.isEmpty else { return }
        ERR_clear_error()
        // The records: the plaintext, and per record of at most 16 KiB a header, a tag and padding.
        self.sink.bytes.reserveCapacity(self.sink.bytes.count + plaintext.count + (plaintext.count >> 14 + 1) * 64)
        var written = 0
        // The sink never pushes back, and partial writes are off: all or an error.
        guard SSL_write_ex(self.ssl, base, plaintext.count, &written) == 1 else {
            throw .protocolError(Self.reasonText())
        }
    }

    /// Queues a `close_notify` alert (see `takeCiphertext`). Idempotent.
    package func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(self.ssl)
        ERR_clear_error()
    }

    // MARK: - Failures

    private func handshakeFailure() -> TLSFailure {
        let verifyResult = SSL_get_verify_result(self.ssl)
        // A server verifies only when it requires client certificates.
        if self.context.isServer || self.context.verifies, verifyResult != X509_V_OK {
            ERR_clear_error()
            return Self.verificationFailure(Int32(verifyResult))
        }
        if let refusal = self.clientCertificateRefusal() {
            ERR_clear_error()
            return refusal
        }
        let error = ERR_peek_last_error()
        if error != 0 {
            switch tether_ERR_GET_REASON(error) {
            case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
                ERR_clear_error()
                return .clientCertificateRequired
            case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION,
                SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH:
                ERR_clear_error()
                return .protocolVersion
            default:
                break
            }
        }
        return .handshakeFailed(Self.reasonText())
    }

    static func verificationFailure(_ code: Int32) -> TLSFailure {
        switch code {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            .hostnameMismatch
        case X509_V_ERR_CERT_HAS_EXPIRED:
            .certificateExpired
        case X509_V_ERR_CERT_NOT_YET_VALID:
            .certificateNotYetValid
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED:
            .untrustedIssuer
        default:
            .certificateInvalid(code: code)
        }
    }

    /// For a client whose server asked for a certificate: the failure the server's alert means for it (none sent,
    /// or ours refused), or nil when the latest error is not such an alert.
    private func clientCertificateRefusal() -> TLSFailure? {
        guard !self.context.isServer else { return nil }
        let error = ERR_peek_last_error()
        guard error != 0, tether_ERR_GET_LIB(error) == ERR_LIB_SSL else { return nil }
        let reason = tether_ERR_GET_REASON(error)
        // TLS 1.3's own alert says it whatever we know.
        if reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED { return .clientCertificateRequired }
        guard self.serverRequestedCertificate else { return nil }
        let presented = SSL_get_certificate(self.ssl) != nil
        // A TLS 1.2 server without a certificate to check can only say `handshake_failure`.
        if !presented { return reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ? .clientCertificateRequired : nil }
        let alert: String? =
            switch reason {
            case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE: "bad certificate"
            case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE: "unsupported certificate"
            case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED: "certificate revoked"
            case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED: "certificate expired"
            case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN: "certificate unknown"
            case SSL_R_TLSV1_ALERT_UNKNOWN_CA: "unknown ca"
            case SSL_R_TLSV1_ALERT_ACCESS_DENIED: "access denied"
            case SSL_R_TLSV1_ALERT_DECRYPT_ERROR: "decrypt error"
            case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE: "handshake failure"
            default: nil
            }
        return alert.map { .clientCertificateRejected(alert: $0) }
    }

    /// The subject of the peer's certificate in RFC 2253 form, or nil without one.
    private func peerSubject() -> String? {
        guard let certificate = SSL_get0_peer_certificate(self.ssl), let bio = BIO_new(BIO_s_mem()) else {
            return nil
        }
        defer { BIO_free(bio) }
        guard tether_X509_NAME_print_rfc2253(bio, X509_get_subject_name(certificate)) >= 0 else { return nil }
        let count = Int(BIO_ctrl_pending(bio))
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(bio, buffer.baseAddress, Int32(count))))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// OpenSSL's fixed reason text for the latest error (never peer data); clears the queue.
    private static func reasonText() -> String {
        let error = ERR_peek_last_error()
        defer { ERR_clear_error() }
        guard error != 0, let reason = ERR_reason_error_string(error) else { return "unknown" }
        return String(cString: reason)
    }

    // MARK: - Pins

    /// Whether a certificate of the peer's chain (the verified one when verifying) has a pinned SPKI.
    private func chainMatchesPins() -> Bool {
        let chain = self.context.verifies ? SSL_get0_verified_chain(self.ssl) : SSL_get_peer_cert_chain(self.ssl)
        for index in 0..<tether_X509_chain_count(chain) {
            guard let certificate = tether_X509_chain_at(chain, index),
                let pin = Self.spkiSHA256Base64(certificate)
            else { continue }
            if self.context.pins.contains(pin) { return true }
        }
        return false
    }

    /// The base64 of the SHA-256 digest of `certificate`'s DER SubjectPublicKeyInfo.
    package static func spkiSHA256Base64(_ certificate: OpaquePointer) -> String? {
        guard let publicKey = X509_get_X509_PUBKEY(certificate) else { return nil }
        let length = i2d_X509_PUBKEY(publicKey, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let encoded = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509_PUBKEY(publicKey, &cursor)
        }
        guard encoded == length else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        guard EVP_Digest(der, der.count, &digest, &digestLength, EVP_sha256(), nil) == 1 else { return nil }
        var text = [UInt8](repeating: 0, count: 4 * ((Int(digestLength) + 2) / 3) + 1)
        let textLength = EVP_EncodeBlock(&text, digest, Int32(digestLength))
        return String(decoding: text[..<Int(textLength)], as: UTF8.self)
    }

    package static func isIPAddress(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
    }
}

/// Where a session's output BIO puts the records for the peer (see `TLSSession.takeCiphertext`).
private final class CiphertextSink {
    var bytes: [UInt8] = []

    /// The BIO method of the sinks, made once.
    static let method = Method()

    struct Method: @unchecked Sendable {
        // Why `@unchecked Sendable` is safe: the BIO_METHOD is completely set up here and never changed afterwards;
        // OpenSSL only reads it, from whichever thread creates or uses a BIO.
        let pointer: OpaquePointer

        init() {
            let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
            guard let method = BIO_meth_new(type, "tether ciphertext sink") else {
                fatalError("OpenSSL could not allocate a BIO method")
            }
            _ = BIO_meth_set_write_ex(method) { bio, data, length, written in
                guard let bio, let context = BIO_get_data(bio) else { return 0 }
                let sink = Unmanaged<CiphertextSink>.fromOpaque(context).takeUnretainedValue()
                if length > 0, let data {
                    sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                }
                written?.pointee = length
                return 1
            }
            // OpenSSL flushes after each flight: nothing is buffered here, so a flush always succeeds.
            _ = BIO_meth_set_ctrl(method) { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }
            _ = BIO_meth_set_create(method) { bio in
                BIO_set_init(bio, 1)
                return 1
            }
            self.pointer = method
        }
    }
}
#endif
