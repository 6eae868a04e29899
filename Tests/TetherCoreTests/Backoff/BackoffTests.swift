import Testing
import TetherCore

@Suite struct BackoffTests {
    @Test func defaultsAreOneSecondTimesTwoCappedAtSixtySecondsWithHalfJitter() {
        let policy = BackoffPolicy()
        #expect(policy.base == 1_000)
        #expect(policy.factor == 2)
        #expect(policy.cap == 60_000)
        #expect(policy.jitterPercent == 50)
        #expect(policy.isValid)
    }

    @Test func aPolicyOutOfRangeIsStoredAsGivenAndReportedInvalid() {
        #expect(BackoffPolicy(base: 0, factor: 1, cap: 0, jitterPercent: 0).isValid)
        let invalid = [
            BackoffPolicy(base: -1), BackoffPolicy(factor: 0), BackoffPolicy(cap: -1), BackoffPolicy(jitterPercent: -1),
        ]
        #expect(invalid.allSatisfy { !$0.isValid })
        #expect(invalid[1].factor == 0)
        #expect(invalid.map { $0.fieldOutOfRange?.name } == ["base", "factor", "cap", "jitterPercent"])
        #expect(invalid[1].fieldOutOfRange?.minimum == 1 && invalid[1].fieldOutOfRange?.value == 0)
    }

    @Test func seededSequenceIsExact() {
        var backoff = Backoff()
        var random = SplitMix64(seed: 7)
        let delays = (0..<9).map { _ in backoff.nextDelay(using: &random) }
        #expect(delays == [1_195, 2_016, 5_802, 10_332, 19_619, 35_991, 60_000, 60_000, 60_000])
        #expect(backoff.attempts == 9)
    }

    @Test func withoutJitterTheSequenceDoublesUpToTheCap() {
        var random = SplitMix64(seed: 1)
        let policy = BackoffPolicy(jitterPercent: 0)
        let delays = (1...8).map { policy.delay(attempt: $0, using: &random) }
        #expect(delays == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000])
    }

    @Test func jitterAddsZeroToFiftyPercentAndTheCapAppliesAfterIt() {
        var random = SplitMix64(seed: 3)
        let policy = BackoffPolicy()
        for attempt in 1...6 {
            let exponential = policy.exponentialDelay(attempt: attempt)
            for _ in 0..<500 {
                let delay = policy.delay(attempt: attempt, using: &random)
                #expect(delay >= exponential && delay <= exponential + exponential / 2)
            }
        }
        // 32 s × 1.5 could reach 48 s; 64 s is capped before jitter would matter: never above 60 s.
        for _ in 0..<500 {
            #expect(policy.delay(attempt: 7, using: &random) == 60_000)
        }
        let near = BackoffPolicy(base: 50_000, cap: 60_000)
        let delays = (0..<500).map { _ in near.delay(attempt: 1, using: &random) }
        #expect(delays.allSatisfy { $0 >= 50_000 && $0 <= 60_000 })
        #expect(delays.contains(60_000))
        #expect(delays.contains { $0 < 60_000 })
    }

    @Test func hugeAttemptNumbersSaturateInsteadOfOverflowing() {
        var random = SplitMix64(seed: 9)
        let policy = BackoffPolicy(base: 1_000, factor: 10, cap: Int.max / 2, jitterPercent: 0)
        #expect(policy.delay(attempt: 1_000, using: &random) == Int.max / 2)
    }

    @Test func resetStartsAgainFromBase() {
        var backoff = Backoff(policy: BackoffPolicy(jitterPercent: 0))
        var random = SplitMix64(seed: 1)
        #expect(backoff.nextDelay(using: &random) == 1_000)
        #expect(backoff.nextDelay(using: &random) == 2_000)
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.nextDelay(using: &random) == 1_000)
    }
}
