import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client under `.makeBeforeBreak`, fed by a scripted path monitor and an in-memory transport: two connections
/// at once, the session on one of them, and what a consumer sees.
@Suite struct WebSocketClientHandoverTests {
    let clock = ManualClock()
    let transport = InMemoryTransport()
    static let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi])
    static let cellular = PathSnapshot(status: .satisfied, isExpensive: true, interfaces: [.cellular])
    static let ethernet = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet])

    func makeClient(monitor: ScriptedPathMonitor, greeting: Bool = false) throws -> (WebSocketClient, EventRecorder) {
        var configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://example.test/feed")!,
            heartbeatInterval: .seconds(10),
            heartbeatTimeout: .seconds(5),
            pathMonitoring: .custom { monitor },
            transport: self.transport
        )
        configuration.interfaceSwitch = .makeBeforeBreak(drain: .milliseconds(300))
        if greeting { configuration.greeting = { [.text("hello")] } }
        let client = try WebSocketClient(configuration: configuration, clock: self.clock, randomSeed: 7)
        return (client, EventRecorder(client.events))
    }

    func nextConnection() async throws -> InMemoryConnection {
        try #require(await self.transport.nextConnection())
    }

    @Test func aSwitchOverlapsTwoConnectionsWithoutLeavingOpenAndEveryMessageNamesItsGeneration() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor, greeting: true)
        await client.start()
        let old = try await self.nextConnection()
        old.emit(.opened(subprotocol: nil))
        #expect(await old.nextCommand() == .send(.text("hello")))
        #expect(await probe.state(.open) != nil)

        monitor.deliver(Self.cellular)
        let new = try await self.nextConnection()  // opened at once, beside the old one
        old.emit(.message(.text("1")))
        new.emit(.opened(subprotocol: nil))
        #expect(await new.nextCommand() == .send(.text("hello")))  // the greeting goes on the new one first
        _ = await probe.record(.handover) { $0.event == .handover(.moved) }
        try await client.send(text: "after")  // the session writes to the new connection now
        #expect(await new.nextCommand() == .send(.text("after")))
        old.emit(.message(.text("2")))  // what the old one still carries is delivered
        new.emit(.message(.text("2")))  // the same broadcast on both: the generation tells them apart

        self.clock.advance(by: .milliseconds(300))  // the drain ends: the old one closes with 1001
        #expect(await old.nextCommand() == .close(code: 1001, reason: "handed_over"))
        old.emit(.ended(.peerClosed(code: 1001)))
        // Each connection's events come in order; the two connections' are not ordered with each other (each is
        // read on its own), so the wait is for the old one's end and the new one's message, and the check is per
        // generation.
        let all = try #require(await probe.wait { snapshot in
            snapshot.records.contains { $0.kind == .closed && $0.generation == 1 }
                && snapshot.events.contains { if case .message(_, 2) = $0 { true } else { false } }
        })
        var delivered: [Int: [String]] = [:]
        for event in all.events {
            guard case .message(.text(let text), let generation) = event else { continue }
            delivered[generation, default: []].append(text)
        }
        #expect(delivered == [1: ["1", "2"], 2: ["2"]])
        let phases = all.events.compactMap { if case .stateChanged(let state, _) = $0 { state.phase } else { nil } }
        let sinceOpen = phases.drop { $0 != .open }
        #expect(!sinceOpen.isEmpty && sinceOpen.allSatisfy { $0 == .open })  // never `.connecting` again
        #expect(await client.state.generation == 2)
        #expect(!new.log.contains { if case .close = $0 { true } else { false } })
        #expect(await client.staleEvents == 0)
        async let stopped: Void = client.stop()
        #expect(await new.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        new.emit(.ended(.peerClosed(code: 1000)))
        await stopped
    }

    @Test func aNewConnectionThatFailsLeavesTheSessionOnTheOldOneWhichIsProbed() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor)
        await client.start()
        let old = try await self.nextConnection()
        old.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)

        monitor.deliver(Self.cellular)
        let new = try await self.nextConnection()
        new.emit(.ended(.connectFailed(.refused)))
        guard case .ping(let id)? = await old.nextCommand() else {
            Issue.record("expected a probe of the old connection")
            return
        }
        old.emit(.pong(id: id))
        _ = await probe.record(.pong)
        let state = await client.state
        #expect(state.phase == .open && state.generation == 1)
        try await client.send(text: "still here")
        #expect(await old.nextCommand() == .send(.text("still here")))
        async let stopped: Void = client.stop()
        #expect(await old.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        old.emit(.ended(.peerClosed(code: 1000)))
        await stopped
    }

    /// A second switch during the drain closes the old connection at once; what it still receives before its end
    /// reaches `events`, as the README promises (it was discarded: the machine forgot the connection it had closed).
    @Test func aSecondSwitchDuringTheDrainStillDeliversTheOldConnectionsLastMessages() async throws {
        let monitor = ScriptedPathMonitor(current: Self.wifi)
        let (client, probe) = try self.makeClient(monitor: monitor)
        await client.start()
        let first = try await self.nextConnection()
        first.emit(.opened(subprotocol: nil))
        #expect(await probe.state(.open) != nil)
        monitor.deliver(Self.cellular)
        let second = try await self.nextConnection()
        second.emit(.opened(subprotocol: nil))
        _ = await probe.record(.handover) { $0.event == .handover(.moved) }  // the first one drains

        monitor.deliver(Self.ethernet)  // a second switch during the drain: the first one closes at once
        #expect(await first.nextCommand() == .close(code: 1001, reason: "handed_over"))
        let third = try await self.nextConnection()
        first.emit(.message(.text("last of 1")))  // read before its end
        first.emit(.ended(.peerClosed(code: 1001)))
        third.emit(.opened(subprotocol: nil))
        second.emit(.message(.text("on 2")))
        // The first connection's end follows its last message on its own stream: once the end is recorded, the
        // message has been delivered or dropped.
        let all = try #require(await probe.wait { snapshot in
            snapshot.messages.contains(.text("on 2"))
                && snapshot.records.contains { $0.generation == 3 && $0.event == .handover(.moved) }
                && snapshot.records.contains { $0.kind == .closed && $0.generation == 1 }
        })
        let delivered = all.events.compactMap { event -> String? in
            if case .message(.text(let text), let generation) = event { "\(text)@\(generation)" } else { nil }
        }
        #expect(delivered.contains("last of 1@1"), "\(delivered)")
        #expect(await client.staleEvents == 0)
        async let stopped: Void = client.stop()
        #expect(await third.nextCommand() == .close(code: 1000, reason: "user_stopped"))
        third.emit(.ended(.peerClosed(code: 1000)))
        second.emit(.ended(.peerClosed(code: 1001)))
        await stopped
    }
}
