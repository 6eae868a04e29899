#if os(Linux)
import Foundation
import Testing
import TetherCore

/// The seeds a run plays, and how a round is played and judged.
///
/// Every run plays a fixed seed and a fresh one, printed with each failure so that it can be played again:
///
///     TETHER_RANDOMIZED_SEED=0x35A1B2C3 swift test --filter RandomizedUseTests
///
/// `TETHER_RANDOMIZED_ROUNDS=N` plays N fresh seeds instead of one (or the replayed seed N times: the plan is the
/// seed's, but how its steps meet the threads of real sockets is each run's own), `TETHER_RANDOMIZED_SCALE=K` makes
/// each round K times longer (K times the sends and the steps): a longer run than CI's. `TETHER_RANDOMIZED_VERBOSE`
/// prints each plan, and for a failure what each connection did at the server and how it ended at the client. A
/// seed's lowest bit says whether the round compresses (`UsePlan.compressed`), so each test plays the seeds of its
/// own kind.
enum RandomizedUse {
    static let environment = ProcessInfo.processInfo.environment
    static let replayed: UInt64? = environment["TETHER_RANDOMIZED_SEED"].flatMap { text in
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }
    static let rounds = environment["TETHER_RANDOMIZED_ROUNDS"].flatMap { Int($0) } ?? 1
    static let verbose = environment["TETHER_RANDOMIZED_VERBOSE"] != nil
    static let scale = max(1, environment["TETHER_RANDOMIZED_SCALE"].flatMap { Int($0) } ?? 1)

    /// The fixed seed (with its lowest bit set for a compressed round) and `rounds` fresh ones of the same kind; or
    /// only the replayed seed, when it is of this kind.
    static func seeds(fixed: UInt64, compressed: Bool) -> [UInt64] {
        let kind: (UInt64) -> UInt64 = { compressed ? $0 | 1 : $0 & ~1 }
        if let replayed {
            // The plan is the seed's; how it meets the threads is the run's: play it `rounds` times.
            return kind(replayed) == replayed ? Array(repeating: replayed, count: rounds) : []
        }
        return [kind(fixed)] + (0..<rounds).map { _ in kind(UInt64.random(in: 0...UInt64.max)) }
    }

    /// Plays `seed` against `peer` and records an issue per broken promise, each naming the seed and how to play it
    /// again (`filter`: the test's `swift test --filter`).
    static func play(
        _ seed: UInt64, peer: any UsePeer, filter: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let plan = UsePlan(seed: seed, scale: Self.scale)
        let started = ContinuousClock.now
        let observed = await UseRound(plan: plan, peer: peer).run()
        var failures = observed.failures
        var summary = "not judged"
        if failures.isEmpty {
            let verdict = UseVerdict(plan: plan).judge(
                outcomes: observed.outcomes, events: observed.events, arrivals: observed.arrivals)
            summary = verdict.summary
            failures = verdict.failures
        }
        let elapsed = started.duration(to: .now)
        if Self.verbose { print(plan) }
        print("randomized use: seed \(UsePlan.hex(seed)) in \(elapsed.formatted(.units(allowed: [.milliseconds]))): "
            + summary)
        if Self.verbose && failures.isEmpty {
            print((peer.connectionSummaries + observed.transportLog).joined(separator: "\n"))
        }
        guard !failures.isEmpty else { return }
        let replay = "play it again: TETHER_RANDOMIZED_SEED=\(UsePlan.hex(seed))"
            + (Self.scale > 1 ? " TETHER_RANDOMIZED_SCALE=\(Self.scale)" : "") + " swift test --filter \(filter)"
        if Self.verbose {
            print((peer.connectionSummaries + observed.transportLog).joined(separator: "\n"))
            for event in observed.events {
                if case .message = event { continue }
                print("  \(event)")
            }
        }
        Issue.record(
            Comment(rawValue: "\(replay)\n\(plan)\n" + failures.map { "- \($0)" }.joined(separator: "\n")),
            sourceLocation: sourceLocation)
    }
}
#endif
