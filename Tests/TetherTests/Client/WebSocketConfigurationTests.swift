import Foundation
import Testing
import TetherCore
@testable import Tether

/// Bad arguments get a typed error that names the property, never a crash.
@Suite struct WebSocketConfigurationTests {
    static let url = URL(string: "ws://example.test/feed")!

    @Test func theDefaultsAreValid() throws {
        try WebSocketConfiguration(url: Self.url).validate()
    }

    @Test func aServersRetryAfterIsCappedAtFiveMinutesByDefaultAndTheCapReachesTheSession() {
        var configuration = WebSocketConfiguration(url: Self.url)
        #expect(configuration.maximumRetryAfter == .seconds(300))
        #expect(configuration.session.maximumRetryAfter == .seconds(300))
        configuration.maximumRetryAfter = .milliseconds(1_500)
        #expect(configuration.session.maximumRetryAfter == .milliseconds(1_500))
    }

    /// One setting, one name, one unit and one rule: a session setting out of range is refused by the session's
    /// own check (`SessionConfiguration.settingOutOfRange`) under the name both configurations give it.
    @Test(arguments: Self.outOfRange.indices)
    func aSessionSettingIsRefusedByTheSessionsRuleUnderTheSameName(index: Int) {
        let (property, change) = Self.outOfRange[index]
        var configuration = WebSocketConfiguration(url: Self.url)
        change(&configuration)
        let clientOnly = ["timerTolerance", "maximumMessageSize"]
        #expect(configuration.session.settingOutOfRange?.setting == (clientOnly.contains(property) ? nil : property))
    }

    static let outOfRange: [(String, @Sendable (inout WebSocketConfiguration) -> Void)] = [
        ("heartbeatInterval", { $0.heartbeatInterval = .zero }),
        ("heartbeatTimeout", { $0.heartbeatTimeout = .zero }),
        ("heartbeatTimeout", { $0.heartbeatTimeout = .microseconds(500) }),  // would round to 0 ms
        ("connectTimeout", { $0.connectTimeout = .seconds(-1) }),
        ("probeTimeout", { $0.probeTimeout = .zero }),
        ("stablePeriod", { $0.stablePeriod = .seconds(-1) }),
        ("retryLaterDelay", { $0.retryLaterDelay = .milliseconds(-5) }),
        ("maximumRetryAfter", { $0.maximumRetryAfter = .milliseconds(-1) }),
        ("closeTimeout", { $0.closeTimeout = .milliseconds(-1) }),
        ("interfaceSwitch.drain", { $0.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(-1)) }),
        ("timerTolerance", { $0.timerTolerance = .milliseconds(-1) }),
        ("maximumMessageSize", { $0.maximumMessageSize = 0 }),
        ("backoff.base", { $0.backoff.base = .milliseconds(-1) }),
        ("backoff.factor", { $0.backoff = BackoffPolicy(factor: 0) }),
        ("backoff.cap", { $0.backoff.cap = .milliseconds(-1) }),
        ("backoff.jitterPercent", { $0.backoff.jitterPercent = -10 }),
    ]

    @Test(arguments: Self.outOfRange.indices)
    func eachPropertyOutOfRangeIsNamed(index: Int) {
        let (property, change) = Self.outOfRange[index]
        var configuration = WebSocketConfiguration(url: Self.url)
        change(&configuration)
        #expect(throws: WebSocketConfigurationError.self) { try configuration.validate() }
        do {
            _ = try WebSocketClient(configuration: configuration)
            Issue.record("the client accepted an invalid \(property)")
        } catch {
            #expect(error.property == property)
            #expect(error.description.contains("WebSocketConfiguration.\(property)"))
        }
    }

    /// Delivery's bounds are declared once, in `delivery` beside the app's functions: the machine's copy is made from
    /// them (`machineSession`), and one out of range is refused under the name the app sets.
    @Test func deliveryBoundsAreDeclaredInDeliveryAndReachTheMachine() throws {
        var configuration = WebSocketConfiguration(url: Self.url)
        configuration.delivery.acknowledgements = AcknowledgementOptions(maximumWrites: 3) { _ in .none }
        configuration.delivery.feeds = FeedOptions(limits: FeedLimits(maximumStreams: 2), positions: ["a": 7]) { _ in
            nil
        }
        try configuration.validate()
        let machine = configuration.machineSession.delivery
        #expect(machine.maximumWrites == 3 && machine.feedLimits.maximumStreams == 2 && machine.feedPositions == ["a": 7])
        #expect(configuration.machineSession.greets == false)  // a feed without `resume` asks for no greeting
        configuration.delivery.acknowledgements?.maximumWrites = 0
        #expect(throws: WebSocketConfigurationError(
            property: "delivery.acknowledgements.maximumWrites", requirement: "at least 1", value: "0"
        )) { try configuration.validate() }
    }

    @Test func makeBeforeBreakIsAcceptedWithADrainOfAtLeastZero() throws {
        var configuration = WebSocketConfiguration(url: Self.url)
        configuration.interfaceSwitch = .makeBeforeBreak()
        try configuration.validate()
        #expect(configuration.session.interfaceSwitch == .makeBeforeBreak(drain: InterfaceSwitchPolicy.defaultDrain))
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(-1))
        #expect(throws: WebSocketConfigurationError(
            property: "interfaceSwitch.drain", requirement: "at least 0", value: "\(Duration.milliseconds(-1))"
        )) { try configuration.validate() }
    }

    @Test func theErrorSaysWhatTheValueWasAndWhatItMustBe() {
        var configuration = WebSocketConfiguration(url: Self.url)
        configuration.heartbeatTimeout = .zero
        #expect(throws: WebSocketConfigurationError(
            property: "heartbeatTimeout", requirement: "at least 1 ms", value: "\(Duration.zero)")
        ) { try configuration.validate() }
    }

    @Test func headersAndSubprotocolsAreCheckedUpFrontWithoutEchoingAValue() {
        let bad: [(String, @Sendable (inout WebSocketConfiguration) -> Void)] = [
            ("headers", { $0.headers = [(name: "X Token", value: "ok")] }),
            ("headers", { $0.headers = [(name: "Authorization", value: "Bearer SECRET-1\r\nX-Evil: 1")] }),
            ("headers", { $0.headers = [(name: "Sec-WebSocket-Key", value: "SECRET-2")] }),
            ("subprotocols", { $0.subprotocols = ["chat", "chat"] }),
            ("subprotocols", { $0.subprotocols = ["a b"] }),
        ]
        for (property, change) in bad {
            var configuration = WebSocketConfiguration(url: Self.url)
            change(&configuration)
            do {
                _ = try WebSocketClient(configuration: configuration)
                Issue.record("accepted a bad \(property)")
            } catch {
                #expect(error.property == property)
                #expect(!error.description.contains("SECRET"))
            }
        }
        var fine = WebSocketConfiguration(url: Self.url)
        fine.headers = [(name: "Authorization", value: "Bearer x\ty"), (name: "Origin", value: "https://a.test")]
        fine.subprotocols = ["chat.v2", "chat"]
        #expect(throws: Never.self) { try fine.validate() }
    }

    @Test func boundaryValuesAreAccepted() throws {
        var configuration = WebSocketConfiguration(url: Self.url)
        configuration.heartbeatInterval = .milliseconds(1)
        configuration.heartbeatTimeout = .milliseconds(1)
        configuration.connectTimeout = .milliseconds(1)
        configuration.probeTimeout = .milliseconds(1)
        configuration.stablePeriod = .zero
        configuration.retryLaterDelay = .zero
        configuration.maximumRetryAfter = .zero
        configuration.closeTimeout = .zero
        configuration.timerTolerance = .zero
        configuration.maximumMessageSize = 1
        configuration.backoff = BackoffPolicy(base: .zero, factor: 1, cap: .zero, jitterPercent: 0)
        try configuration.validate()
        _ = try WebSocketClient(configuration: configuration)
    }
}
