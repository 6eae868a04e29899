import Testing
import TetherCore

@Suite struct BackoffTests {
    @Test func defaultsAreOneSecondTimesTwoCappedAtSixtySecondsWithHalfJitter() {
        let policy = BackoffPolicy()
        #expect(policy.base == .seconds(1))
        #expect(policy.factor == 2)
        #expect(policy.cap == .seconds(60))
        #expect(policy.jitterPercent == 50)
        #expect(policy.isValid)
    }

    @Test func aPolicyOutOfRangeIsStoredAsGivenAndReportedInvalid() {
        #expect(BackoffPolicy(base: .zero, factor: 1, cap: .zero, jitterPercent: 0).isValid)
        let invalid = [
            BackoffPolicy(base: .milliseconds(-1)), BackoffPolicy(factor: 0), BackoffPolicy(cap: .milliseconds(-1)),
            BackoffPolicy(jitterPercent: -1),
        ]
        #expect(invalid.allSatisfy { !$0.isValid })
        #expect(invalid[1].factor == 0)
        #expect(invalid.map { $0.fieldOutOfRange?.setting } == ["base", "factor", "cap", "jitterPercent"])
        #expect(invalid[1].fieldOutOfRange
            == SettingOutOfRange(setting: "factor", requirement: "at least 1", value: "0"))
        #expect(invalid[0].fieldOutOfRange?.value == "\(Duration.milliseconds(-1))")
    }

    /// The millisecond initializers of before base and cap were durations still compile, and mean the same.
    @available(*, deprecated)
    @Test func theMillisecondInitializersOfBeforeMeanTheSame() {
        #expect(BackoffPolicy(base: 500, factor: 3, cap: 9_000) == BackoffPolicy(
            base: .milliseconds(500), factor: 3, cap: .seconds(9)))
        #expect(BackoffPolicy(base: 1_000, factorPercent: 150) == BackoffPolicy(factorPercent: 150))
    }

    @Test func seededSequenceIsExact() {
        var backoff = Backoff()
        var random = SplitMix64(seed: 7)
        let delays = (0..<9).map { _ in backoff.nextDelay(using: &random) }
        // Below the cap the draws are those of the cap-after-jitter policy this replaced; at the cap they spread.
        #expect(delays == [1_195, 2_016, 5_802, 10_332, 19_619, 35_991, 49_359, 46_561, 42_685])
        #expect(backoff.attempts == 9)
    }

    @Test func withoutJitterTheSequenceDoublesUpToTheCap() {
        var random = SplitMix64(seed: 1)
        let policy = BackoffPolicy(jitterPercent: 0)
        let delays = (1...8).map { policy.delay(attempt: $0, using: &random).milliseconds }
        #expect(delays == [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000])
    }

    @Test func belowTheCapJitterAddsZeroToFiftyPercent() {
        var random = SplitMix64(seed: 3)
        let policy = BackoffPolicy()
        for attempt in 1...6 {
            let exponential = policy.exponentialDelay(attempt: attempt)
            #expect(policy.delayRange(attempt: attempt) == exponential...(exponential + exponential / 2))
            for _ in 0..<500 {
                let delay = policy.delay(attempt: attempt, using: &random)
                #expect(delay >= exponential && delay <= exponential + exponential / 2)
            }
        }
    }

    @Test func retriesAtTheCapSpreadBelowItInsteadOfAllWaitingTheCap() {
        var random = SplitMix64(seed: 3)
        let policy = BackoffPolicy()
        // 32 s × 1.5 is 48 s, under the cap; 64 s is past it: from attempt 7 on the delay is drawn from 40–60 s (the
        // same relative spread as below the cap, ending at the cap), never above 60 s.
        for attempt in [7, 8, 20, 1_000] {
            #expect(policy.delayRange(attempt: attempt) == .seconds(40)...(.seconds(60)))
        }
        let delays = (0..<500).map { _ in policy.delay(attempt: 7, using: &random).milliseconds }
        #expect(delays.allSatisfy { $0 >= 40_000 && $0 <= 60_000 })
        #expect(delays.contains { $0 < 45_000 } && delays.contains { $0 > 55_000 })
        #expect(Set(delays).count > 400, "\(Set(delays).count) distinct delays in 500")
        // Two clients that failed together and reached the cap: after ten more retries each, they no longer
        // retry at the same moment (with the cap after the jitter, both waited exactly 60 s every time).
        var first = SplitMix64(seed: 11)
        var second = SplitMix64(seed: 12)
        let firstTimes = (0..<10).reduce(into: [0]) { times, _ in
            times.append(times.last! + policy.delay(attempt: 7, using: &first).milliseconds)
        }
        let secondTimes = (0..<10).reduce(into: [0]) { times, _ in
            times.append(times.last! + policy.delay(attempt: 7, using: &second).milliseconds)
        }
        #expect(zip(firstTimes.dropFirst(), secondTimes.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test func anExponentialWhoseJitterWouldPassTheCapIsDrawnFromTheCapsRange() {
        var random = SplitMix64(seed: 5)
        let near = BackoffPolicy(base: .seconds(50), cap: .seconds(60))
        #expect(near.delayRange(attempt: 1) == .seconds(40)...(.seconds(60)))
        let delays = (0..<500).map { _ in near.delay(attempt: 1, using: &random).milliseconds }
        #expect(delays.allSatisfy { $0 >= 40_000 && $0 <= 60_000 })
        #expect(delays.contains(where: { $0 < 50_000 }))
        // Without jitter the cap is the delay, exactly; a jitter of 100 % spreads it over its upper half.
        let exact = BackoffPolicy(base: .seconds(50), cap: .seconds(60), jitterPercent: 0)
        #expect(exact.delayRange(attempt: 3) == .seconds(60)...(.seconds(60)))
        #expect(BackoffPolicy(jitterPercent: 100).delayRange(attempt: 9) == .seconds(30)...(.seconds(60)))
        #expect(BackoffPolicy(cap: .milliseconds(7)).delayRange(attempt: 9) == .milliseconds(4)...(.milliseconds(7)))
        #expect(BackoffPolicy(jitterPercent: .max).delayRange(attempt: 9) == .zero...(.seconds(60)))
    }

    @Test func aDurationCountsInWholeMillisecondsRoundedDown() {
        let policy = BackoffPolicy(base: .microseconds(1_999), factor: 2, cap: .microseconds(10_500), jitterPercent: 0)
        var random = SplitMix64(seed: 1)
        let delays = (1...5).map { policy.delay(attempt: $0, using: &random) }
        #expect(delays == [1, 2, 4, 8, 10].map(Duration.milliseconds))
    }

    @Test func hugeAttemptNumbersSaturateInsteadOfOverflowing() {
        var random = SplitMix64(seed: 9)
        let policy = BackoffPolicy(factor: 10, cap: .milliseconds(Int.max / 2), jitterPercent: 0)
        #expect(policy.delay(attempt: 1_000, using: &random) == .milliseconds(Int.max / 2))
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
