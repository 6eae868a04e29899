/// Builds the `AttemptTimings` of one attempt as a transport goes through its steps: a step begins and ends at
/// times in milliseconds from the attempt's start, passed in (the transport reads its own monotonic clock), and a
/// snapshot taken before a step ended shows it unfinished, timed up to the snapshot.
package struct AttemptTimingsRecorder: Sendable {
    /// The steps a transport times (the TCP connects come whole from the race; the greeting is the session's).
    package enum Kind: Sendable {
        case resolve, proxy, tls, upgrade
    }

    private var timings = AttemptTimings()
    /// Steps begun and not ended, with their starts.
    private var running: [(kind: Kind, start: Int)] = []

    package init() {}

    /// Step `kind` begins at `now`.
    package mutating func begin(_ kind: Kind, at now: Int) {
        self.running.removeAll { $0.kind == kind }
        self.running.append((kind, now))
    }

    /// Step `kind` ended at `now` (nothing when it did not begin).
    package mutating func end(_ kind: Kind, at now: Int) {
        guard let index = self.running.firstIndex(where: { $0.kind == kind }) else { return }
        let start = self.running.remove(at: index).start
        self[kind] = AttemptTimings.Step(start: start, duration: max(0, now - start))
    }

    /// The TCP connects of a race, as it ended.
    package mutating func connected(_ attempts: [AttemptTimings.TCPAttempt]) {
        self.timings.tcp = attempts
    }

    /// Whether TLS resumed a session.
    package mutating func tlsCompleted(resumed: Bool) {
        self.timings.tlsHandshake = resumed ? .resumed : .full
    }

    /// A redirect was followed: the next hop's steps replace this one's.
    package mutating func redirected() {
        self.timings = AttemptTimings()
        self.running = []
    }

    /// The timings at `now`: the steps ended, and the ones still running as unfinished, up to `now`.
    package func snapshot(at now: Int) -> AttemptTimings {
        var copy = self
        for (kind, start) in self.running {
            copy[kind] = AttemptTimings.Step(start: start, duration: max(0, now - start), finished: false)
        }
        return copy.timings
    }

    private subscript(kind: Kind) -> AttemptTimings.Step? {
        get {
            switch kind {
            case .resolve: self.timings.resolve
            case .proxy: self.timings.proxy
            case .tls: self.timings.tls
            case .upgrade: self.timings.upgrade
            }
        }
        set {
            switch kind {
            case .resolve: self.timings.resolve = newValue
            case .proxy: self.timings.proxy = newValue
            case .tls: self.timings.tls = newValue
            case .upgrade: self.timings.upgrade = newValue
            }
        }
    }
}
