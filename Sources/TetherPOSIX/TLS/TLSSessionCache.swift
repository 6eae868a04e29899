#if os(Linux)
import COpenSSL
import Glibc

/// A client context's resumable TLS sessions (`SSL_SESSION`s: TLS 1.3 tickets and TLS 1.2 sessions), the latest
/// one per server, at most `capacity` servers, the least recently used dropped first.
///
/// The cache belongs to one `TLSContext`, so a session is only ever offered under the trust roots, pins and
/// verification setting it was verified with. It holds one reference to each session it keeps and frees it when
/// the session is replaced, evicted, taken, removed or the cache goes away.
///
/// Not thread-safe: `TLSContext` keeps it behind a lock.
package struct TLSSessionCache: ~Copyable {
    /// A server: the name TLS verifies and sends in SNI, and the port (one name may serve unrelated services).
    package struct Key: Hashable, Sendable {
        package let serverName: String
        package let port: Int

        package init(serverName: String, port: Int) {
            self.serverName = serverName
            self.port = port
        }
    }

    /// How many servers keep a session.
    package let capacity: Int
    /// Least recently used first; at most one entry per key.
    private var entries: [(key: Key, session: OpaquePointer)] = []

    package init(capacity: Int) {
        precondition(capacity >= 1, "a session cache holds at least one session")
        self.capacity = capacity
        self.entries.reserveCapacity(capacity)
    }

    deinit {
        for entry in self.entries { SSL_SESSION_free(entry.session) }
    }

    /// How many sessions are kept.
    package var count: Int { self.entries.count }

    /// Keeps `session` (taking over the caller's reference) as `key`'s latest, in place of an older one, and as
    /// the most recently used; beyond `capacity`, the least recently used server's session is freed.
    package mutating func store(_ session: OpaquePointer, for key: Key) {
        if let index = self.entries.firstIndex(where: { $0.key == key }) {
            // The cache's reference to the older one (perhaps the same session stored again) goes.
            SSL_SESSION_free(self.entries.remove(at: index).session)
        }
        self.entries.append((key, session))
        if self.entries.count > self.capacity {
            SSL_SESSION_free(self.entries.removeFirst().session)
        }
    }

    /// `key`'s session to offer, as a reference the caller owns (and frees), or nil. A TLS 1.3 session (a ticket)
    /// leaves the cache: RFC 8446 (C.4) asks clients not to reuse a ticket, so that connections cannot be linked
    /// by it; the connection it resumes brings new ones. A TLS 1.2 session stays for the next connection too.
    /// An expired session, or one no longer resumable (OpenSSL marks a TLS 1.2 session so when a connection using
    /// it sends or receives a fatal alert), is freed instead of offered.
    /// - Parameter now: seconds since the epoch (`time(nil)`).
    package mutating func take(for key: Key, now: Int) -> OpaquePointer? {
        guard let index = self.entries.firstIndex(where: { $0.key == key }) else { return nil }
        let session = self.entries[index].session
        guard SSL_SESSION_is_resumable(session) == 1,
            now < SSL_SESSION_get_time(session) + SSL_SESSION_get_timeout(session)
        else {
            self.entries.remove(at: index)
            SSL_SESSION_free(session)
            return nil
        }
        if SSL_SESSION_get_protocol_version(session) >= TLS1_3_VERSION {
            self.entries.remove(at: index)
            return session
        }
        // Most recently used now; the caller gets a reference of its own.
        self.entries.append(self.entries.remove(at: index))
        SSL_SESSION_up_ref(session)
        return session
    }

    /// Frees `key`'s session if it is still `session` (a handshake that offered it failed). The caller holds a
    /// reference to `session`, so its address cannot have been reused by another session meanwhile.
    package mutating func remove(_ session: OpaquePointer, for key: Key) {
        guard let index = self.entries.firstIndex(where: { $0.key == key && $0.session == session }) else { return }
        self.entries.remove(at: index)
        SSL_SESSION_free(session)
    }
}
#endif
