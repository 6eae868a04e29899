/// The racing part of Happy Eyeballs v2 (RFC 8305, sections 4 and 5) as a state machine: which address to try
/// when, which attempt wins, which to close. Facts in (`start`, `attemptConnected`, `attemptFailed`,
/// `timerFired`, `deadlinePassed`, `cancelled`), actions out; time is a parameter in milliseconds, so the
/// machine is tested as a transcript and driven on an event loop by `TCPConnection.connect`.
///
/// Attempts are numbered by their place in the interleaved list (`interleave(_:)`). The first starts at once;
/// each next one starts `attemptDelay` after the previous start, or at once when an attempt fails and none is
/// left waiting on the delay. Started attempts are never abandoned for a later one ("starting a new connection
/// attempt does not affect previous attempts"), so at most one attempt per address is in flight, and the delay
/// bounds how fast they are added. The first to connect wins and every other one still in flight is closed.
package struct HappyEyeballs: Sendable {
    /// RFC 8305's recommended Connection Attempt Delay.
    package static let defaultAttemptDelay = 250
    /// The RFC's lower and upper bounds for the delay (10 ms may not be undercut; 2 s is the recommended maximum).
    package static let attemptDelayRange = 10...2_000

    package enum Action: Equatable, Sendable {
        /// Open a socket and connect it to attempt `index`'s address.
        case startAttempt(Int)
        /// Call `timerFired` at `at` (milliseconds); replaces any earlier timer.
        case setTimer(at: Int)
        /// Close attempt `index`'s socket: another one won, or the race ended without it.
        case closeAttempt(Int)
        /// Attempt `index` connected: hand its socket over. Sent after the `closeAttempt`s of the others.
        case succeed(Int)
        /// The race is over without a connection.
        case fail(Failure)
    }

    package enum Failure: Equatable, Sendable {
        /// Every address was tried and failed.
        case exhausted
        /// The caller's deadline passed first.
        case timedOut
        /// The caller gave up.
        case cancelled
    }

    private struct Racing {
        /// The next attempt to start; `count` when all have started.
        var next: Int
        /// Attempts started that have neither connected nor failed, in start order.
        var inFlight: [Int]
        /// When the next attempt starts if nothing fails first; nil when none is left.
        var nextStartAt: Int?
    }

    private enum State {
        case idle
        case racing(Racing)
        case finished
    }

    private let count: Int
    private let attemptDelay: Int
    private var state: State = .idle

    /// - Parameters:
    ///   - count: how many addresses there are to try (at least one).
    ///   - attemptDelay: milliseconds between attempt starts, clamped to `attemptDelayRange`.
    package init(count: Int, attemptDelay: Int = HappyEyeballs.defaultAttemptDelay) {
        precondition(count > 0, "Happy Eyeballs needs an address to try")
        self.count = count
        self.attemptDelay = min(max(attemptDelay, Self.attemptDelayRange.lowerBound), Self.attemptDelayRange.upperBound)
    }

    /// Orders addresses for racing (RFC 8305 section 4): the family of the first address first, then
    /// alternating families, each family keeping the order the resolver gave (RFC 6724).
    package static func interleave<Address>(
        _ addresses: [Address], family: (Address) -> SocketAddress.Family
    ) -> [Address] {
        guard let first = addresses.first else { return [] }
        let preferred = family(first)
        var primary = addresses.filter { family($0) == preferred }[...]
        var secondary = addresses.filter { family($0) != preferred }[...]
        var ordered: [Address] = []
        ordered.reserveCapacity(addresses.count)
        while !primary.isEmpty || !secondary.isEmpty {
            if let next = primary.popFirst() { ordered.append(next) }
            if let next = secondary.popFirst() { ordered.append(next) }
        }
        return ordered
    }

    package mutating func start(now: Int) -> [Action] {
        switch self.state {
        case .idle:
            var racing = Racing(next: 0, inFlight: [], nextStartAt: nil)
            let actions = self.startNext(&racing, now: now)
            self.state = .racing(racing)
            return actions
        case .racing, .finished:
            preconditionFailure("a race starts once")
        }
    }

    /// Attempt `index`'s socket became writable without an error.
    package mutating func attemptConnected(_ index: Int) -> [Action] {
        switch self.state {
        case .racing(let racing):
            guard racing.inFlight.contains(index) else { return [] }  // already closed: cannot report again
            self.state = .finished
            return racing.inFlight.filter { $0 != index }.map(Action.closeAttempt) + [.succeed(index)]
        case .finished:
            return []  // a second attempt connected on the same loop turn as the winner; it was closed
        case .idle:
            preconditionFailure("no attempt runs before start")
        }
    }

    /// Attempt `index` failed (refused, unreachable, or a socket that could not be made); its socket is closed.
    package mutating func attemptFailed(_ index: Int, now: Int) -> [Action] {
        switch self.state {
        case .racing(var racing):
            guard let position = racing.inFlight.firstIndex(of: index) else { return [] }
            racing.inFlight.remove(at: position)
            var actions: [Action] = []
            if racing.next < self.count {
                // A failure frees its place at once instead of waiting out the delay.
                actions = self.startNext(&racing, now: now)
            }
            if racing.inFlight.isEmpty, racing.next >= self.count {
                self.state = .finished
                return actions + [.fail(.exhausted)]
            }
            self.state = .racing(racing)
            return actions
        case .finished:
            return []  // the race ended on this loop turn; the attempt's socket is already closed
        case .idle:
            preconditionFailure("no attempt runs before start")
        }
    }

    package mutating func timerFired(now: Int) -> [Action] {
        switch self.state {
        case .racing(var racing):
            guard let due = racing.nextStartAt, now >= due else { return [] }  // a timer replaced by a later one
            let actions = self.startNext(&racing, now: now)
            self.state = .racing(racing)
            return actions
        case .finished:
            return []  // the timer lost a race with the end
        case .idle:
            preconditionFailure("no timer runs before start")
        }
    }

    /// The caller's one deadline for the whole connect passed.
    package mutating func deadlinePassed() -> [Action] { self.end(.timedOut) }

    /// The caller gave up.
    package mutating func cancelled() -> [Action] { self.end(.cancelled) }

    private mutating func end(_ failure: Failure) -> [Action] {
        switch self.state {
        case .idle:
            self.state = .finished
            return [.fail(failure)]
        case .racing(let racing):
            self.state = .finished
            return racing.inFlight.map(Action.closeAttempt) + [.fail(failure)]
        case .finished:
            return []  // the deadline or the cancellation lost a race with the end
        }
    }

    /// Starts attempt `racing.next` and arms the timer for the one after it, if any.
    private func startNext(_ racing: inout Racing, now: Int) -> [Action] {
        let index = racing.next
        racing.next += 1
        racing.inFlight.append(index)
        var actions: [Action] = [.startAttempt(index)]
        if racing.next < self.count {
            racing.nextStartAt = now + self.attemptDelay
            actions.append(.setTimer(at: now + self.attemptDelay))
        } else {
            racing.nextStartAt = nil
        }
        return actions
    }
}
