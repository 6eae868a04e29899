#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether
import TetherTesting

/// A network switch on real links, under both interface-switch policies in one run: the server (behind both links)
/// broadcasts a numbered feed every 20 ms to every connection; the default route moves from the first link (`va`)
/// to the second (`vc`); then the first link goes down. What the consumer received across the switch, and how long
/// the session was not open, are the figures of each policy (printed as `handover.*` lines).
extension WebSocketClientRealLinkTests {
    /// What one run of the switch showed.
    struct SwitchFigures: CustomStringConvertible {
        /// Feed numbers missing between the first and the last received, over every generation.
        var missed: Int
        /// Milliseconds the session was not `.open` after it first opened.
        var notOpen: Int
        /// Feed numbers received twice (once on each connection of an overlap).
        var duplicates: Int
        var generations: Set<Int>

        var description: String {
            "missed \(self.missed), not open \(self.notOpen) ms, duplicates \(self.duplicates), "
                + "generations \(self.generations.sorted())"
        }
    }

    static let feedInterval = 20

    /// The feed numbers the client delivered, with their generations, in order.
    static func feed(_ events: [WebSocketEvent]) -> [(number: Int, generation: Int)] {
        events.compactMap { event in
            guard case .message(.text(let text), let generation) = event,
                  let number = Scenario.Broadcast.number(in: Array(text.utf8)) else { return nil }
            return (number, generation)
        }
    }

    /// Runs the switch under `policy`; `check` sees the server's connection records before the servers stop.
    func switchNetworks(
        _ policy: InterfaceSwitchPolicy, check: ([ConnectionRecord], [LogRecord]) -> Void
    ) async throws -> SwitchFigures {
        let setup = try Setup(
            secondLink: true, heartbeatInterval: .seconds(1), heartbeatTimeout: .seconds(1),
            probeTimeout: .milliseconds(500), serverBehindBothLinks: true,
            scenario: .broadcast(everyMilliseconds: Self.feedInterval), interfaceSwitch: policy)
        defer { setup.fixture.remove() }
        let (client, fixture, probe) = (setup.client, setup.fixture, setup.probe)
        try await setup.startOpen()
        _ = await probe.wait(timeout: .seconds(20)) { Self.feed($0.events).count >= 10 }

        // The route moves to the second link: a switch of interfaces while open.
        let switched = await client.currentTime
        try fixture.inWatched("route", "replace", "default", "via", "198.51.100.2", "dev", "vc")
        switch policy {
        case .makeBeforeBreak:
            // The old connection closed with 1001 once the session moved and the drain passed.
            _ = try await setup.records("the old connection closed after the move") { records in
                records.contains { $0.kind == .closed && $0.generation == 1 }
            }
            _ = try await setup.server.waitForEnd(ofConnection: 1, timeout: .seconds(10))
        case .probe:
            _ = try await setup.records("the probe's pong") { records in
                records.contains { $0.kind == .pong && $0.time >= switched }
            }
        }
        // Then the first link goes down; a second of the feed after it ends the run.
        let lastBefore = Self.feed(probe.snapshot.events).map(\.number).max() ?? 0
        try fixture.inWatched("link", "set", "va", "down")
        let wanted = lastBefore + 1_000 / Self.feedInterval
        guard let snapshot = await probe.wait(timeout: .seconds(20), until: { snapshot in
            Self.feed(snapshot.events).contains { $0.number >= wanted }
        }) else {
            Issue.record("the feed did not reach \(wanted): \(probe.records.map(\.logLine).joined(separator: "\n"))")
            await setup.tearDown()
            return SwitchFigures(missed: -1, notOpen: -1, duplicates: -1, generations: [])
        }
        check(setup.server.connections, snapshot.records)
        await setup.tearDown()

        let feed = Self.feed(snapshot.events)
        let numbers = Set(feed.map(\.number))
        let first = numbers.min() ?? 0, last = numbers.max() ?? 0
        // Time not open: from the session's first `.open`, every stretch its records spend in another phase.
        var notOpen = 0
        var phase: SessionPhase?
        var since = 0
        for record in snapshot.records where record.generation >= 1 {
            if phase == nil {
                guard record.to == .open else { continue }
                phase = .open
                since = record.time
                continue
            }
            if phase != .open { notOpen += record.time - since }
            phase = record.to
            since = record.time
        }
        return SwitchFigures(
            missed: (last - first + 1) - numbers.count, notOpen: notOpen, duplicates: feed.count - numbers.count,
            generations: Set(feed.map(\.generation)))
    }

    @Test(needsRoot)
    func makeBeforeBreakCarriesTheFeedAcrossANetworkSwitchWhereAProbeLosesPartOfIt() async throws {
        let made = try await self.switchNetworks(.makeBeforeBreak(drain: .milliseconds(500))) { server, records in
            // The session never left `.open` after opening, and nothing counted an attempt.
            let afterOpen = records.drop { $0.kind != .opened }.dropFirst()  // from `.connecting` to `.open`, then
            #expect(afterOpen.allSatisfy { $0.from == .open && $0.to == .open }, "\(afterOpen.map(\.logLine))")
            let first = server.first { $0.index == 1 }
            let second = server.first { $0.index == 2 }
            #expect(first?.clientHost == "192.0.2.1")  // the first connection left over the first link
            #expect(second?.clientHost == "198.51.100.1")  // the new one over the second
            #expect(first?.closeReceived?.code == 1001)  // the old one ended with the client's 1001
        }
        // No drain at all: the old connection is closed at the move, and what the server wrote to it before it read
        // the close still arrives (the client reads until the closing handshake ends).
        let undrained = try await self.switchNetworks(.makeBeforeBreak(drain: .zero)) { _, _ in }
        let probed = try await self.switchNetworks(.probe) { _, _ in }
        print("handover.make_before_break_missed \(made.missed)")
        print("handover.make_before_break_not_open_ms \(made.notOpen)")
        print("handover.make_before_break_duplicates \(made.duplicates)")
        print("handover.make_before_break_drain0_missed \(undrained.missed)")
        print("handover.make_before_break_drain0_duplicates \(undrained.duplicates)")
        print("handover.probe_missed \(probed.missed)")
        print("handover.probe_not_open_ms \(probed.notOpen)")
        #expect(made.missed == 0 && made.notOpen == 0, "make-before-break: \(made)")
        #expect(made.generations.count >= 2, "make-before-break: \(made)")
        #expect(undrained.missed == 0 && undrained.notOpen == 0, "make-before-break without a drain: \(undrained)")
        // The same link loss under `.probe`: the connection the session kept dies with the first link, and the
        // feed broadcast while it reconnects is lost.
        #expect(probed.missed > 0 && probed.notOpen > 0, "probe: \(probed)")
    }
}
#endif
