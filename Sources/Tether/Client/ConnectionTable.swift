/// A client's connections by generation, and the callers waiting for each one's reading to finish. Two tables,
/// because a connection is left (closed, or ended) before its events finish being read: `stop()` waits for both.
struct ConnectionTable {
    /// Live connections. An entry is removed when its close action runs or it ended.
    private var live: [Int: any TransportConnection] = [:] {
        didSet { self.version &+= 1 }
    }
    /// Changes each time a connection is added or left: while it is the same, so is every `self[generation]`.
    private(set) var version = 0
    /// Connections whose events are still being read, with the callers of `stop()` waiting for the reading to end:
    /// at the connection's `.ended` when it delivers directly, when its `events` finish otherwise.
    private var reading: [Int: Waiters] = [:]
    /// What the handshake of each live connection that opened agreed.
    private var handshakes: [Int: HandshakeResult] = [:]

    subscript(generation: Int) -> (any TransportConnection)? { self.live[generation] }

    var all: Dictionary<Int, any TransportConnection>.Values { self.live.values }
    var liveCount: Int { self.live.count }
    var readingCount: Int { self.reading.count }
    var readingGenerations: [Int] { Array(self.reading.keys) }

    /// Generation `generation`'s events will be read from now on (before its connection exists: a transport may
    /// deliver as soon as it is asked to connect).
    mutating func startReading(_ generation: Int) {
        self.reading[generation] = Waiters()
    }

    mutating func add(_ connection: any TransportConnection, generation: Int) {
        self.live[generation] = connection
    }

    /// The connection of `generation` opened with `handshake` (kept while it is live).
    mutating func opened(_ generation: Int, _ handshake: HandshakeResult) {
        guard self.live[generation] != nil else { return }  // a late report of a connection already left
        self.handshakes[generation] = handshake
    }

    /// What the handshake of live connection `generation` agreed, once it opened.
    func handshake(of generation: Int) -> HandshakeResult? {
        self.handshakes[generation]
    }

    /// Leaves the connection of `generation`, if it is live: the barrier that keeps an action for one generation
    /// from ever reaching another's connection.
    @discardableResult
    mutating func remove(_ generation: Int) -> (any TransportConnection)? {
        self.handshakes[generation] = nil
        return self.live.removeValue(forKey: generation)
    }

    /// Waits until generation `generation`'s reading has finished (returns at once if it has).
    mutating func waitForReading(_ generation: Int, _ continuation: CheckedContinuation<Void, Never>) {
        if self.reading[generation] != nil {
            self.reading[generation]?.append(continuation)
        } else {
            continuation.resume()
        }
    }

    /// Generation `generation` has nothing more to deliver: it is left, and its waiters are returned to be resumed
    /// once the machine has heard of it.
    mutating func readingFinished(_ generation: Int) -> Waiters {
        self.live[generation] = nil
        self.handshakes[generation] = nil
        return self.reading.removeValue(forKey: generation) ?? Waiters()
    }
}
