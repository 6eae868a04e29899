import Testing
@testable import TetherCore

/// The session's one configuration: `Duration`s in, whole milliseconds inside, one check of every setting.
@Suite struct SessionConfigurationTests {
    @Test func theDefaultsAreInRangeAndReachTheMachineInMilliseconds() {
        let configuration = SessionConfiguration()
        #expect(configuration.settingOutOfRange == nil)
        let timing = SessionTiming(configuration)
        #expect(timing == SessionTiming(configuration))
        #expect([timing.heartbeatInterval, timing.heartbeatTimeout, timing.connectTimeout, timing.probeTimeout]
            == [15_000, 5_000, 10_000, 2_000])
        #expect([timing.stablePeriod, timing.retryLaterDelay, timing.maximumRetryAfter, timing.closeTimeout]
            == [30_000, 5_000, 300_000, 2_000])
    }

    @Test func theFirstSettingOutOfRangeIsNamedWithItsRuleAndValue() {
        var configuration = SessionConfiguration()
        configuration.heartbeatTimeout = .microseconds(500)  // would round to 0 ms
        #expect(configuration.settingOutOfRange == SettingOutOfRange(
            setting: "heartbeatTimeout", requirement: "at least 1 ms", value: "\(Duration.microseconds(500))"))
        configuration.heartbeatTimeout = .milliseconds(1)
        configuration.retryLaterDelay = .milliseconds(-5)
        #expect(configuration.settingOutOfRange?.setting == "retryLaterDelay")
        configuration.retryLaterDelay = .zero
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 0)
        #expect(configuration.settingOutOfRange?.setting == "retryPolicy.maximumAttempts")
        configuration.retryPolicy = RetryPolicy()
        configuration.outboxLimits = OutboxLimits(count: -1)
        #expect(configuration.settingOutOfRange?.setting == "outboxLimits")
        configuration.outboxLimits = OutboxLimits()
        configuration.backoff.cap = .milliseconds(-1)
        #expect(configuration.settingOutOfRange?.setting == "backoff.cap")
    }

    @Test func theDeliverySettingsAreCheckedUnderTheirNames() {
        var configuration = SessionConfiguration()
        configuration.delivery.maximumWrites = 0
        #expect(configuration.settingOutOfRange == SettingOutOfRange(
            setting: "delivery.acknowledgements.maximumWrites", requirement: "at least 1", value: "0"))
        configuration.delivery.maximumWrites = nil
        #expect(configuration.settingOutOfRange == nil)
        configuration.delivery.feedLimits.maximumStreams = 0
        #expect(configuration.settingOutOfRange?.setting == "delivery.feeds.limits.maximumStreams")
        configuration.delivery.feedLimits = FeedLimits(maximumStreams: 1, maximumOpenGaps: -1)
        #expect(configuration.settingOutOfRange?.setting == "delivery.feeds.limits.maximumOpenGaps")
        configuration.delivery.feedLimits = FeedLimits(maximumStreams: 1)
        configuration.delivery.feedPositions = ["a": 1, "b": 2]
        #expect(configuration.settingOutOfRange?.setting == "delivery.feeds.positions")
    }

    @Test func anInterfaceSwitchDrainIsNeverNegativeAndReachesTheMachineInMilliseconds() {
        var configuration = SessionConfiguration()
        #expect(configuration.interfaceSwitch == .probe)
        #expect(SessionTiming(configuration).switchDrain == nil)
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(-1))
        #expect(configuration.settingOutOfRange == SettingOutOfRange(
            setting: "interfaceSwitch.drain", requirement: "at least 0", value: "\(Duration.milliseconds(-1))"))
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .zero)
        #expect(configuration.settingOutOfRange == nil)
        configuration.interfaceSwitch = .makeBeforeBreak()
        #expect(SessionTiming(configuration).switchDrain == 500)
    }

    @Test func millisecondsRoundTowardZeroAndSaturate() {
        #expect(Duration.microseconds(1_999).milliseconds == 1)
        #expect(Duration.seconds(2).milliseconds == 2_000)
        #expect(Duration.seconds(Int64.max).milliseconds == Int.max)
        #expect(Duration.seconds(Int64.min).milliseconds == Int.min)
    }
}
