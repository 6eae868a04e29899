#if os(Linux)
import Glibc

/// How a `TCPConnection.connect` call failed: the summary error it throws, and every address it tried with
/// what happened there, in the order the attempts ended. An attempt still in flight when the race ended
/// (deadline, cancellation) is listed with that end.
package struct ConnectRaceFailure: Error, Sendable, CustomStringConvertible {
    package var error: SocketError
    package var attempts: [(address: SocketAddress, error: SocketError)]

    package init(error: SocketError, attempts: [(address: SocketAddress, error: SocketError)]) {
        self.error = error
        self.attempts = attempts
    }

    /// For example `timed out ([2001:db8::2]:80: timed out, 192.0.2.2:80: connection refused)`.
    package var description: String {
        guard !self.attempts.isEmpty else { return self.error.description }
        let tried = self.attempts.map { "\($0.address): \($0.error)" }.joined(separator: ", ")
        return "\(self.error) (\(tried))"
    }
}

/// One `connect` call on the loop: runs a `HappyEyeballs` machine over the addresses, one socket per started
/// attempt, and resumes the caller exactly once with the winner or a `ConnectRaceFailure`. Every socket that is
/// not handed over is closed before the caller resumes.
final class ConnectRace: Sendable {
    typealias Continuation = CheckedContinuation<Result<TCPConnection, ConnectRaceFailure>, Never>

    private let loop: EventLoop
    private let deadline: ContinuousClock.Instant
    private let state: LoopBound<State>

    /// One started attempt: its socket and its registration for writability.
    private final class Attempt: LoopSelectable {
        let index: Int
        let descriptor: Int32
        var registrationID: UInt64?
        /// Reports writability to the race. The cycle through `State.attempts` ends when the attempt is closed
        /// or handed over, which every end of the race does.
        let race: ConnectRace

        init(index: Int, descriptor: Int32, race: ConnectRace) {
            self.index = index
            self.descriptor = descriptor
            self.race = race
        }

        func ready(_ readiness: Readiness) {
            self.race.attemptReady(self.index)
        }

        func loopShuttingDown() {
            self.race.loopShuttingDown()
        }
    }

    /// Loop thread only.
    private final class State {
        /// The addresses in racing order.
        let addresses: [SocketAddress]
        /// Pre-made sockets (one per address, in racing order) when connecting inside a namespace; -1 once used.
        var sockets: [Int32]?
        /// The interface every attempt's socket is bound to (`SO_BINDTODEVICE`); nil to follow the routes.
        let interface: String?
        var machine: HappyEyeballs
        var continuation: Continuation?
        var cancelledBeforeStart = false
        var finished = false
        var started: ContinuousClock.Instant?
        var attempts: [Int: Attempt] = [:]
        var outcomes: [(index: Int, error: SocketError)] = []
        var attemptTimer: TimerHandle?
        var deadlineTimer: TimerHandle?
        /// Where each attempt's start and end are noted, when the caller times the race.
        let timeline: ConnectTimeline?

        init(
            addresses: [SocketAddress], sockets: [Int32]?, interface: String?, attemptDelay: Int,
            timeline: ConnectTimeline?
        ) {
            self.addresses = addresses
            self.sockets = sockets
            self.interface = interface
            self.timeline = timeline
            self.machine = HappyEyeballs(count: addresses.count, attemptDelay: attemptDelay)
        }
    }

    /// - Parameter addresses: in racing order (see `HappyEyeballs.interleave`), with `sockets` in the same order.
    init(
        addresses: [SocketAddress], sockets: [Int32]?, interface: String?, attemptDelay: Int,
        deadline: ContinuousClock.Instant, loop: EventLoop, timeline: ConnectTimeline? = nil
    ) {
        self.loop = loop
        self.deadline = deadline
        self.state = LoopBound(
            State(
                addresses: addresses, sockets: sockets, interface: interface, attemptDelay: attemptDelay,
                timeline: timeline),
            loop: loop)
    }

    func start(_ continuation: Continuation) {
        let state = self.state.value
        state.continuation = continuation
        if state.cancelledBeforeStart {
            self.run(state.machine.cancelled())
            return
        }
        state.started = self.loop.now
        state.deadlineTimer = self.loop.schedule(at: self.deadline) { [self] in
            self.run(self.state.value.machine.deadlinePassed())
        }
        self.run(state.machine.start(now: 0))
    }

    func cancel() {
        let state = self.state.value
        if state.continuation == nil {
            state.cancelledBeforeStart = true
        } else {
            self.run(state.machine.cancelled())
        }
    }

    /// Milliseconds since the race started, the machine's clock.
    private var now: Int {
        guard let started = self.state.value.started else { return 0 }
        return Self.milliseconds(started.duration(to: self.loop.now))
    }

    /// Whole milliseconds, rounded down.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    fileprivate func attemptReady(_ index: Int) {
        let state = self.state.value
        guard let attempt = state.attempts[index] else { return }
        let code = Socket.pendingError(attempt.descriptor)
        if code == 0 {
            self.run(state.machine.attemptConnected(index))
        } else {
            self.attemptFailed(index, SocketError(operation: "connect", errno: code))
        }
    }

    fileprivate func loopShuttingDown() {
        let state = self.state.value
        guard !state.finished else { return }
        for index in Array(state.attempts.keys) { self.close(index, because: .closed) }
        self.finish(.failure(.closed))
    }

    /// Runs the machine's actions in order; an attempt that fails while starting feeds its failure back, and the
    /// actions that follow from it run after the ones already returned.
    private func run(_ actions: [HappyEyeballs.Action]) {
        var pending = actions[...]
        while let action = pending.popFirst() {
            let state = self.state.value
            switch action {
            case .startAttempt(let index):
                if let error = self.startAttempt(index) {
                    self.recordOutcome(index, error)
                    pending.append(contentsOf: state.machine.attemptFailed(index, now: self.now))
                }
            case .setTimer(let at):
                state.attemptTimer?.cancel()
                let instant = (state.started ?? self.loop.now) + .milliseconds(at)
                state.attemptTimer = self.loop.schedule(at: instant) { [self] in
                    self.run(self.state.value.machine.timerFired(now: self.now))
                }
            case .closeAttempt(let index):
                self.close(index, because: self.ending(pending) ?? .cancelled)
            case .succeed(let index):
                guard let attempt = state.attempts.removeValue(forKey: index) else {
                    preconditionFailure("the machine names a started attempt")
                }
                if let id = attempt.registrationID { self.loop.deregister(attempt.descriptor, id: id) }
                state.timeline?.ended(index, error: nil, at: self.loop.now)
                self.finish(.success(attempt.descriptor))
            case .fail(let failure):
                switch failure {
                case .timedOut: self.finish(.failure(.timedOut))
                case .cancelled: self.finish(.failure(.cancelled))
                case .exhausted: self.finish(.failure(state.outcomes.last?.error ?? .unreachable))
                }
            }
        }
    }

    /// What an attempt closed by the machine is recorded with: the race's end when one follows, else "cancelled"
    /// (another attempt won).
    private func ending(_ pending: ArraySlice<HappyEyeballs.Action>) -> SocketError? {
        for action in pending {
            switch action {
            case .fail(.timedOut): return .timedOut
            case .fail(.cancelled): return .cancelled
            case .fail(.exhausted), .succeed: return .cancelled
            case .startAttempt, .setTimer, .closeAttempt: continue
            }
        }
        return nil
    }

    /// Opens attempt `index`'s socket and starts its connect; returns the error when it failed at once.
    private func startAttempt(_ index: Int) -> SocketError? {
        let state = self.state.value
        let address = state.addresses[index]
        state.timeline?.started(index, address: address, at: self.loop.now)
        let descriptor: Int32
        do throws(SocketError) {
            if let sockets = state.sockets {
                descriptor = sockets[index]
                state.sockets![index] = -1
            } else {
                descriptor = try Socket.makeTCP(family: address.protocolFamily)
                self.loop.adopt(descriptor)
            }
        } catch {
            return error
        }
        let attempt = Attempt(index: index, descriptor: descriptor, race: self)
        do throws(SocketError) {
            try Socket.setNoDelay(descriptor)
            if let interface = state.interface { try Socket.bind(descriptor, toInterface: interface) }
        } catch {
            self.loop.release(descriptor)
            return error
        }
        let result = address.withSockAddr { Glibc.connect(descriptor, $0, $1) }
        let code = errno
        state.attempts[index] = attempt
        if result == 0 {
            // Connected at once (loopback can): the machine hears it like a writable socket, on this turn.
            self.loop.execute { [self] in self.attemptReady(index) }
            return nil
        }
        guard code == EINPROGRESS || code == EINTR else {
            state.attempts[index] = nil
            self.loop.release(descriptor)
            return SocketError(operation: "connect", errno: code)
        }
        do throws(SocketError) {
            attempt.registrationID = try self.loop.register(descriptor, interest: .writable, owner: attempt)
        } catch {
            state.attempts[index] = nil
            self.loop.release(descriptor)
            return error
        }
        return nil
    }

    private func attemptFailed(_ index: Int, _ error: SocketError) {
        self.close(index, because: error)
        self.run(self.state.value.machine.attemptFailed(index, now: self.now))
    }

    /// Closes attempt `index`'s socket and records why it ended.
    private func close(_ index: Int, because error: SocketError) {
        let state = self.state.value
        guard let attempt = state.attempts.removeValue(forKey: index) else { return }
        if let id = attempt.registrationID { self.loop.deregister(attempt.descriptor, id: id) }
        self.loop.release(attempt.descriptor)
        self.recordOutcome(index, error)
    }

    /// Records how attempt `index` ended (and when, on the timeline).
    private func recordOutcome(_ index: Int, _ error: SocketError) {
        let state = self.state.value
        state.outcomes.append((index, error))
        state.timeline?.ended(index, error: error, at: self.loop.now)
    }

    /// Resumes the caller once, closing every socket that is not handed over.
    private func finish(_ outcome: Result<Int32, SocketError>) {
        let state = self.state.value
        guard !state.finished else { return }
        state.finished = true
        state.deadlineTimer?.cancel()
        state.attemptTimer?.cancel()
        state.sockets?.filter { $0 >= 0 }.forEach(self.loop.release)
        state.sockets = nil
        let continuation = state.continuation
        state.continuation = nil
        switch outcome {
        case .success(let descriptor):
            continuation?.resume(returning: .success(TCPConnection(descriptor: descriptor, loop: self.loop)))
        case .failure(let error):
            let attempts = state.outcomes.map { (address: state.addresses[$0.index], error: $0.error) }
            continuation?.resume(returning: .failure(ConnectRaceFailure(error: error, attempts: attempts)))
        }
    }
}
#endif
