#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherTestServer
@testable import Tether

/// Issue 16's session promises over real sockets: nothing received is dropped, the hint never blocks a user's
/// attempt, queued sends survive reconnects after the greeting, and a bounded retry ends visibly.
extension AcceptanceTests {
    @Test func keepAndProbeInTheBackgroundDeliversEverythingTheServerSends() async throws {
        let count = 20
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url, timeout: 1000)
                configuration.lifecycle = .keepAndProbe
                return configuration
            },
            scenario: .send(count: count, size: 8, everyMilliseconds: 30)
        ) { harness in
            await harness.client.start()
            _ = try #require(await harness.probe.message())  // the stream has begun: 19 more over 570 ms
            await harness.client.enterBackground()
            #expect(await harness.client.state.phase == .suspended)
            let done = try #require(await harness.probe.wait { $0.messages.count >= count })
            // In order, every one, the later ones read while the session was suspended.
            let indices = done.messages.map { message -> Int? in
                guard case .text(let text) = message else { return nil }
                return Int(text.prefix { $0.isNumber })
            }
            #expect(indices == (0..<count).map { $0 })
            let background = try #require(done.events.firstIndex {
                if case .record(let record) = $0 { return record.kind == .background }
                return false
            })
            let afterBackground = done.events[background...].count {
                if case .message = $0 { return true }
                return false
            }
            #expect(afterBackground >= 1, "no message arrived in the background")
            #expect(await harness.client.state.phase == .suspended)
            #expect(await harness.client.staleEvents == 0)
            #expect(harness.records(.stale).isEmpty)
        }
    }

    @Test func theSessionOwnsTheConnectDeadlineAndTheTransportOnlyABackstop() async throws {
        try await withHarness(
            configure: { url in
                var configuration = AcceptanceHarness.configuration(url: url)
                configuration.connectTimeout = .milliseconds(150)
                #expect(configuration.transportRequest.connectTimeout == 1_300)
                return configuration
            },
            scenario: .silentHandshake
        ) { harness in
            await harness.client.start()
            let connecting = try #require(await harness.probe.record(.connecting))
            let closed = try #require(await harness.probe.record(.closed))
            // The machine's close (code 1001 from its own `.closeTransport`), at its deadline, not the transport's.
            #expect(closed.reason == .connectTimeout && closed.code == 1001 && closed.generation == 1)
            let late = closed.time - connecting.time - 150
            #expect(late >= 0 && late < 1_000, "closed \(late) ms after the deadline")
            try await harness.server.waitForEnd(ofConnection: 1)
        }
    }
}
#endif
