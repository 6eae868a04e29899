#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer
import TetherTesting

/// Make-before-break on loopback (README, "Switching networks"): a scripted path report names a new interface while
/// the session is open on a server's numbered broadcast; the session opens a second connection, moves to it, and
/// closes the old one after the drain, without leaving `.open` and without a gap in the feed.
extension CheckScenarios {
    static func handover(_ run: ScenarioRun) async throws(CheckFailure) {
        let drain = 300
        let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi], interfaceNames: ["wlan0"])
        let cellular = PathSnapshot(
            status: .satisfied, isExpensive: true, interfaces: [.cellular], interfaceNames: ["rmnet0"])
        let monitor = ScriptedPathMonitor(current: wifi)
        let server = try run.server(.broadcast(everyMilliseconds: 10))
        let (client, recorder) = try run.client(
            url: server.url(path: "/handover"), pathMonitoring: .custom { monitor }
        ) {
            $0.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(drain))
        }
        await client.start()
        try await run.wait(recorder, "the open and the feed") { snapshot in
            snapshot.records.first(.opened) != nil && snapshot.messages.count >= 10
        }
        run.mark("path: cellular (rmnet0)")
        monitor.deliver(cellular)
        try await run.wait(recorder, "the move to the new connection") { snapshot in
            snapshot.records.contains { $0.event == .handover(.moved) }
        }
        do {
            try await client.send(text: "after the move")
        } catch {
            throw .setup("send after the move: \(error)")
        }
        let snapshot = try await run.wait(recorder, "the old connection's close") { snapshot in
            snapshot.records.contains { $0.kind == .closed && $0.generation == 1 }
        }
        let servers = try await run.wait(server, "the server's view of both connections") { records in
            records.count >= 2 && records[0].closeReceived != nil && records[1].messageCount >= 1
        }
        // A second of the feed after the old connection's close, then the whole story is read.
        let closedAt = snapshot.records.first { $0.kind == .closed && $0.generation == 1 }?.time ?? 0
        let lastBefore = Self.feedNumbers(snapshot.events).map(\.number).max() ?? 0
        let wanted = lastBefore + 50
        let final = try await run.wait(recorder, "the feed to go on on the new connection") { snapshot in
            Self.feedNumbers(snapshot.events).contains { (number: Int, _: Int) in number >= wanted }
        }
        let records: [LogRecord] = final.records
        let opening = records.first { $0.event == .handover(.opening) }
        let moved = records.first { $0.event == .handover(.moved) }
        let phases = records.drop { $0.kind != .opened }.dropFirst()
        run.expect(phases.allSatisfy { $0.from == .open && $0.to == .open }, "the session never left open",
                   phases.filter { $0.from != .open || $0.to != .open }.map(\.logLine).joined(separator: "; "))
        run.expect(opening?.generation == 2 && moved?.generation == 2, "a second connection opened and took over",
                   "opening gen \(opening?.generation ?? -1), moved gen \(moved?.generation ?? -1)")
        let oldClose = servers[0].closeReceived
        run.expect(oldClose?.code == 1001, "the old connection closed with 1001",
                   "\(oldClose.map { "\($0.code ?? 0) \($0.reason)" } ?? "none")")
        let overlap = moved.map { closedAt - $0.time }
        run.expect(overlap, in: drain...(drain + run.timing.tolerance), "the old connection drained, then closed")
        run.expect(servers[1].messageCount == 1 && servers[0].messageCount == 0,
                   "after the move the session writes to the new connection",
                   "old got \(servers[0].messageCount), new got \(servers[1].messageCount)")
        let feed = Self.feedNumbers(final.events)
        let numbers = Set(feed.map(\.number))
        let missed = ((numbers.max() ?? 0) - (numbers.min() ?? 0) + 1) - numbers.count
        run.expect(missed == 0, "no number of the feed missed across the switch", "\(missed) missed")
        run.note("overlap", "\(overlap ?? -1)ms")
        run.note("received_twice", String(feed.count - numbers.count))
        run.note("generations", Set(feed.map(\.generation)).sorted().map(String.init).joined(separator: ","))
        run.note("attempts", String(records.compactMap(\.attempt).max() ?? 0))
    }

    /// The broadcast's numbers the client delivered, with the generation each came on.
    static func feedNumbers(_ events: [WebSocketEvent]) -> [(number: Int, generation: Int)] {
        events.compactMap { event in
            guard case .message(let message, let generation) = event else { return nil }
            let payload: [UInt8] =
                switch message {
                case .text(let text): Array(text.utf8)
                case .binary(let data): Array(data)
                }
            return Scenario.Broadcast.number(in: payload).map { ($0, generation) }
        }
    }
}
#endif
