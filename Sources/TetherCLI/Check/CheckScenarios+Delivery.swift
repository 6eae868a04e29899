#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer
import TetherTesting

/// Acknowledged sends and a resumable feed (docs/delivery.md) against the test server's delivery protocol, through a
/// proxy that cuts the connection in the middle of a frame: nothing lost, nothing twice.
extension CheckScenarios {
    static func delivery(_ run: ScenarioRun) async throws(CheckFailure) {
        // The first connection takes the sends without acknowledging them: the cut catches all of them unanswered.
        let acknowledging = try run.server(
            describedAs: "delivery protocol (sends acknowledged from the second connection on), feed prices every "
                + "10 ms, through a proxy that splits every write and cuts the connection mid-frame"
        ) { context in
            var scenario = Scenario.delivery(streams: ["prices"], everyMilliseconds: 10).recordingPayloads()
            scenario.delivery?.acknowledges = context.index > 1
            return scenario
        }
        let proxy: FaultProxy
        do {
            proxy = try FaultProxy(upstreamPort: acknowledging.port, splitting: true)
        } catch {
            throw .setup("fault proxy: \(error)")
        }
        run.onCleanup { await proxy.stop() }
        let (client, recorder) = try run.client(url: "ws://127.0.0.1:\(proxy.port)/delivery") {
            $0.delivery.acknowledgements = TestServerDeliveryProtocol.acknowledgements()
            $0.delivery.feeds = TestServerDeliveryProtocol.feeds(["prices"])
        }
        await client.start()
        try await run.wait(recorder, "the feed on the first connection") { Self.pricesDelivered($0.events).count >= 10 }
        let ids = (1...8).map { "order-\($0)" }
        for id in ids.prefix(5) {
            try await Self.sendAcknowledged(client, id)
        }
        try await run.wait(acknowledging, "the first five sends taken") { _ in
            acknowledging.deliveryRecord.takenCount >= 5
        }
        run.mark("connection cut mid-frame, 5 sends unacknowledged")
        await proxy.cutConnections()
        try await run.wait(recorder, "the cut connection's end") { snapshot in
            snapshot.records.contains { $0.kind == .closed && $0.generation == 1 }
        }
        for id in ids.suffix(3) {
            try await Self.sendAcknowledged(client, id)  // queued while the connection is being replaced
        }
        let snapshot = try await run.wait(recorder, "every send acknowledged and the feed on the next connection") {
            snapshot in
            Self.acknowledgements(snapshot.events).count == ids.count
                && snapshot.records.contains { $0.kind == .opened && $0.generation == 2 }
                && Self.pricesDelivered(snapshot.events).count >= 40
        }
        let record = acknowledging.deliveryRecord
        let acknowledged = Self.acknowledgements(snapshot.events)
        run.expect(record.taken == ids, "the server took every send once, in order",
                   "\(record.takenCount) taken: \(record.taken.joined(separator: ","))")
        run.expect(record.repeats == 5, "the five written again were dropped as repeats", "\(record.repeats) repeats")
        run.expect(acknowledged.count == ids.count && Set(acknowledged.map(\.id)) == Set(ids),
                   "each send acknowledged once", acknowledged.map { "\($0.id)×\($0.writes)" }.joined(separator: ","))
        run.expect(acknowledged.filter { $0.writes == 2 }.count == 5, "the five unanswered were written twice",
                   acknowledged.map { "\($0.writes)" }.joined(separator: ","))
        let numbers = Self.pricesDelivered(snapshot.events)
        let broken = zip(numbers, numbers.dropFirst()).filter { $1 != $0 + 1 }
        run.expect(broken.isEmpty, "the feed went on from where it was cut: no number lost, none twice",
                   broken.isEmpty ? "\(numbers.first ?? 0)...\(numbers.last ?? 0)" : "\(broken.prefix(5))")
        let lastOnFirst = snapshot.events.compactMap { event -> UInt64? in
            guard case .message(let message, 1) = event else { return nil }
            return TestServerDeliveryProtocol.feedPosition(in: message)?.sequence
        }.last
        let resumed = acknowledging.connection(2)?.messages.elements.first.map {
            String(decoding: $0.payload ?? [], as: UTF8.self)
        }
        run.expect(lastOnFirst != nil && resumed == "subscribe prices \(lastOnFirst ?? 0)",
                   "the next connection resumed after the last number delivered", resumed ?? "nothing")
        let counts = await client.deliveryCounts
        run.note("sends", "\(ids.count), \(record.repeats) written twice")
        run.note("feed", "\(numbers.first ?? 0)...\(numbers.last ?? 0), resumed after \(lastOnFirst ?? 0)")
        run.note("dropped", "\(counts.duplicatesDropped) duplicates, \(counts.gaps) gaps")
    }

    private static func sendAcknowledged(_ client: WebSocketClient, _ id: String) async throws(CheckFailure) {
        do {
            try await client.send(TestServerDeliveryProtocol.send(id: id, body: "buy 1"), id: id)
        } catch {
            throw .setup("send \(id): \(error)")
        }
    }

    /// The acknowledgements reported, in order.
    private static func acknowledgements(_ events: [WebSocketEvent]) -> [(id: String, writes: Int)] {
        events.compactMap { event in
            guard case .delivery(.acknowledged(let id, let writes)) = event else { return nil }
            return (id, writes)
        }
    }

    /// The numbers of the feed delivered, in order.
    private static func pricesDelivered(_ events: [WebSocketEvent]) -> [UInt64] {
        events.compactMap { event in
            guard case .message(let message, _) = event else { return nil }
            return TestServerDeliveryProtocol.feedPosition(in: message)?.sequence
        }
    }
}
#endif
