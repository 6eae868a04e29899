#if os(Linux)
import Testing
@testable import TetherTestServer
@testable import TetherWire

/// The test server's delivery protocol (`Scenario.DeliveryProtocol`) seen from a raw client: acknowledgements, each
/// id taken once across connections, a resume that sends what is retained, and what is not a command.
@Suite(.timeLimit(.minutes(1))) struct TestServerDeliveryTests {
    @Test func aSendIsAcknowledgedAndTakenOnceWhateverConnectionRepeatsIt() async throws {
        let server = try TestServer(scenario: .delivery(everyMilliseconds: 1_000))
        var (first, _) = try await RawClient.open(server)
        try await first.send(text: "send a body of a")
        #expect(await first.nextMessage() == .text("ack a"))
        try await first.send(text: "send a body of a")  // a repeat on the same connection
        #expect(await first.nextMessage() == .text("ack a"))
        var (second, _) = try await RawClient.open(server)
        try await second.send(text: "send a again")  // and on another
        #expect(await second.nextMessage() == .text("ack a"))
        try await second.send(text: "send b x")
        #expect(await second.nextMessage() == .text("ack b"))
        let record = server.deliveryRecord
        #expect(record.taken == ["a", "b"] && record.takenCount == 2 && record.repeats == 2)
        #expect(record.acknowledgementsSent == 4)
        await server.stop()
    }

    @Test func aSubscriptionResumesAfterItsNumberWithWhatIsRetainedThenGoesOn() async throws {
        let server = try TestServer(scenario: .delivery(streams: ["p"], everyMilliseconds: 10, retained: 5))
        var (watcher, _) = try await RawClient.open(server)
        try await watcher.send(text: "subscribe p")
        var live: [String] = []
        while live.count < 12, let message = await watcher.nextMessage() {
            if case .text(let text) = message { live.append(text) }
        }
        let numbers = live.compactMap { UInt64($0.split(separator: " ").last ?? "") }
        #expect(live.allSatisfy { $0.hasPrefix("feed p ") } && zip(numbers, numbers.dropFirst()).allSatisfy {
            $1 == $0 + 1
        }, "\(live)")
        // Resuming after a number well behind: only the last 5 are retained, then the feed goes on.
        var (late, _) = try await RawClient.open(server)
        try await late.send(text: "subscribe p 1")
        var resumed: [UInt64] = []
        while resumed.count < 8, case .text(let text)? = await late.nextMessage() {
            resumed.append(UInt64(text.split(separator: " ").last ?? "") ?? 0)
        }
        #expect(resumed.first.map { $0 > 2 } ?? false, "\(resumed)")  // what was not retained is skipped
        #expect(zip(resumed, resumed.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(resumed)")
        await server.stop()
    }

    @Test func whatIsNotACommandIsEchoedWhenEchoingAndAnUnknownStreamSendsNothing() async throws {
        let server = try TestServer(scenario: Scenario.echo.speakingDeliveryProtocol(
            streams: ["p"], everyMilliseconds: 5, acknowledges: false))
        var (client, _) = try await RawClient.open(server)
        try await client.send(text: "subscribe nothing")
        try await client.send(text: "send x y")  // taken, not acknowledged
        try await client.send(text: "hello")
        #expect(await client.nextMessage() == .text("hello"))
        #expect(server.deliveryRecord.taken == ["x"] && server.deliveryRecord.acknowledgementsSent == 0)
        await server.stop()
    }

    @Test func commandsAreReadExactly() {
        typealias Command = Scenario.DeliveryProtocol.Command
        #expect(Command(Array("send 7 buy 10 now".utf8)) == .send(id: "7"))
        #expect(Command(Array("subscribe prices".utf8)) == .subscribe(stream: "prices", after: nil))
        #expect(Command(Array("subscribe prices 41".utf8)) == .subscribe(stream: "prices", after: 41))
        for text in ["send 7", "send", "subscribe", "subscribe p x", "subscribe p 1 2", "ack 7", "", "send  body"] {
            #expect(Command(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func theProtocolsSettingsAreChecked() {
        for scenario in [
            Scenario.delivery(streams: [], everyMilliseconds: 10),
            Scenario.delivery(streams: ["two words"], everyMilliseconds: 10),
            Scenario.delivery(everyMilliseconds: 0),
            Scenario.delivery(everyMilliseconds: 10, retained: -1),
        ] {
            #expect(throws: TestServerError.self) { try scenario.validate() }
        }
        #expect(Scenario.delivery(streams: ["p", "q"], everyMilliseconds: 10, retained: 5).description
            == "accept, delivery protocol: acknowledges sends, feeds p q every 10 ms, 5 retained")
    }

    @Test func theIdsRememberedAreBoundedTheOldestForgottenAndCounted() {
        var ledger = DeliveryLedger(limit: 2)
        let taken = ["a", "b", "c", "c", "b", "a"].map { ledger.take($0) }
        #expect(taken == [true, true, true, false, false, true])  // "a" was forgotten: taken again
        let record = ledger.snapshot
        #expect(record.taken == ["c", "a"] && record.takenCount == 4 && record.forgotten == 2 && record.repeats == 2)
        var none = DeliveryLedger(limit: 0)
        let takenWithoutMemory = ["a", "a"].map { none.take($0) }
        #expect(takenWithoutMemory == [true, true] && none.snapshot.forgotten == 2 && none.snapshot.taken.isEmpty)
    }
}
#endif
