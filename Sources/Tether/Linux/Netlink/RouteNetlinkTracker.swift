#if os(Linux)
/// Keeps a `RouteNetlinkModel` in sync with the kernel: dumps links, then addresses, then routes (one dump at a
/// time, as the kernel allows per socket), applies notifications, and starts over when messages were lost.
/// Pure: datagrams in, requests to send and the snapshot out. Snapshots are only reported while in sync.
struct RouteNetlinkTracker: Sendable {
    enum Dump: Equatable, Sendable {
        case links, addresses, routes

        var requestType: UInt16 {
            switch self {
            case .links: Netlink.MessageType.getLink
            case .addresses: Netlink.MessageType.getAddress
            case .routes: Netlink.MessageType.getRoute
            }
        }

        /// Size of the family header the request carries (`ifinfomsg`, `ifaddrmsg`, `rtmsg`), all zero.
        var requestHeaderSize: Int {
            switch self {
            case .links: 16
            case .addresses: 8
            case .routes: 12
            }
        }
    }

    private enum Phase: Equatable {
        /// No dump running and the model not trusted: before the first `resynchronize()`, or between a dump
        /// that ended unusable and the next.
        case idle
        /// A dump request with this sequence number is answered. `restart` is set when the result cannot be
        /// trusted (messages lost, dump interrupted): the sync starts over when this dump ends.
        case dumping(Dump, sequence: UInt32, restart: Bool)
        case synced
    }

    /// What to do after a datagram.
    struct Step: Equatable, Sendable {
        /// Requests to send to the kernel, in order.
        var requests: [[UInt8]] = []
        /// The path as the model now shows it; `nil` while a sync is in progress.
        var snapshot: PathSnapshot?
        /// The kernel refused the dumps `refusalLimit` times in a row (negative errno of the last refusal);
        /// the tracker cannot make progress.
        var refusal: Int32?
    }

    /// Refusals in a row before giving up. `ENOBUFS` (the receive queue filled up again with notifications
    /// after it was read) does not count: it is transient, and each retry follows a full read of the queue, so
    /// retries are paced by the kernel's own burst. Under CPU contention a burst of a few hundred notifications
    /// into a small buffer can refuse more than `refusalLimit` dumps in a row without anything being wrong.
    static let refusalLimit = 8
    /// `-ENOBUFS` as netlink reports it.
    static let queueFull: Int32 = -105

    private(set) var model = RouteNetlinkModel()
    private var phase = Phase.idle
    private var lastSequence: UInt32 = 0
    private var refusalsInARow = 0

    var isSynced: Bool { self.phase == .synced }

    /// Starts a full sync from an empty model, or, when a dump is running (the kernel allows one per socket),
    /// arranges one for when it ends. Returns the requests to send.
    mutating func resynchronize() -> [[UInt8]] {
        switch self.phase {
        case .dumping(let dump, let sequence, _):
            self.phase = .dumping(dump, sequence: sequence, restart: true)
            return []
        case .idle, .synced:
            self.model = RouteNetlinkModel()
            return [self.request(.links)]
        }
    }

    /// Applies one datagram from the kernel.
    mutating func receive(_ datagram: [UInt8]) -> Step {
        var step = Step()
        let (messages, failure) = NetlinkMessage.split(datagram)
        for message in messages {
            let event: RouteNetlinkEvent
            do {
                event = try RouteNetlinkEvent(decoding: message)
            } catch {
                // A message we cannot read may have changed the path: trust nothing and dump again. An unreadable
                // error reply to our dump also ended that dump.
                if case .dumping(_, let sequence, _) = self.phase, message.sequence == sequence,
                    message.type == Netlink.MessageType.error
                {
                    self.phase = .idle
                }
                step.requests += self.resynchronize()
                continue
            }
            if let refusal = self.advance(after: event, in: message, requests: &step.requests) {
                step.refusal = refusal
                return step
            }
            self.model.apply(event)
        }
        if failure != nil {
            step.requests += self.resynchronize()
        }
        if self.phase == .synced {
            step.snapshot = self.model.snapshot
        }
        return step
    }

    /// Moves the sync along for a message; returns the errno when the kernel refused the current dump.
    private mutating func advance(
        after event: RouteNetlinkEvent,
        in message: NetlinkMessage,
        requests: inout [[UInt8]]
    ) -> Int32? {
        if case .overrun = event {
            requests += self.resynchronize()
            return nil
        }
        guard case .dumping(let dump, let sequence, let restart) = self.phase, message.sequence == sequence else {
            return nil
        }
        switch event {
        case .done(let error) where error != 0, .error(let error) where error != 0:
            if error != Self.queueFull {
                self.refusalsInARow += 1
            }
            guard self.refusalsInARow < Self.refusalLimit else { return error }
            self.phase = .idle
            requests += self.resynchronize()
        case .done:
            if restart || message.flags & Netlink.HeaderFlag.dumpInterrupted != 0 {
                self.phase = .idle
                requests += self.resynchronize()
                return nil
            }
            switch dump {
            case .links: requests.append(self.request(.addresses))
            case .addresses: requests.append(self.request(.routes))
            case .routes:
                self.phase = .synced
                self.refusalsInARow = 0
            }
        case .linkChanged, .linkRemoved, .addressAdded, .addressRemoved, .routeAdded, .routeRemoved, .error,
            .overrun, .ignored:
            if message.flags & Netlink.HeaderFlag.dumpInterrupted != 0 {
                self.phase = .dumping(dump, sequence: sequence, restart: true)
            }
        }
        return nil
    }

    private mutating func request(_ dump: Dump) -> [UInt8] {
        self.lastSequence &+= 1
        self.phase = .dumping(dump, sequence: self.lastSequence, restart: false)
        return NetlinkMessage.encode(
            type: dump.requestType,
            flags: Netlink.HeaderFlag.request | Netlink.HeaderFlag.dump,
            sequence: self.lastSequence,
            payload: [UInt8](repeating: 0, count: dump.requestHeaderSize)
        )
    }
}
#endif
