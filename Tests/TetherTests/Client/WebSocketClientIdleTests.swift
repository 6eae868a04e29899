#if os(Linux)
import Foundation
import Testing
import TetherCore
import TetherPOSIX
import TetherTestServer
@testable import Tether
import TetherTesting

/// An open client with nothing due costs nothing: its event loop sleeps in the kernel until the next heartbeat.
@Suite struct WebSocketClientIdleTests {
    /// Open, with the next ping a minute away: over two seconds the client's loop does not wake up once (no
    /// polling, no timer firing early, no stray work queued). The wait is the span being observed, not a
    /// synchronisation: a loaded machine can only delay a wake-up, never add one, so it cannot make this fail.
    @Test func anOpenClientWithNoHeartbeatDueNeverWakesItsLoop() async throws {
        let loop = try EventLoop(name: "test-idle")
        defer { loop.shutdown() }
        let server = try TestServer(scenario: .normal)
        var configuration = WebSocketClient.Configuration(
            url: URL(string: server.url(path: "/idle"))!,
            heartbeatInterval: .seconds(60),
            transport: SocketTransport(loop: loop)
        )
        configuration.eventLoop = loop
        // No path monitor: a route or link change anywhere on the host (the real-link tests beside this one make
        // veth pairs) is a legitimate reason to wake the client, and not what this test observes.
        configuration.pathMonitoring = .none
        let client = try WebSocketClient(configuration: configuration)
        let probe = EventRecorder(client.events)
        await client.start()
        #expect(await probe.state(.open) != nil)
        // The turn that delivered the open, and anything it queued, is over once this returns.
        await loop.settle()
        let before = loop.wakeUps
        try await Task.sleep(for: .seconds(2))
        #expect(loop.wakeUps == before, "the loop woke \(loop.wakeUps - before) times with nothing due")
        #expect(probe.records.filter { $0.kind == .ping }.isEmpty)
        await client.stop()
        await server.stop()
    }

    /// The wake-up counter counts (the test above would pass with one that never does): a timer due after the
    /// loop went to sleep wakes it.
    @Test func aTimerWakesTheLoopAndIsCounted() async throws {
        let loop = try EventLoop(name: "test-wakes")
        defer { loop.shutdown() }
        await loop.settle()
        let before = loop.wakeUps
        let fired = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            loop.schedule(after: .milliseconds(20)) { done.resume(returning: loop.inEventLoop) }
        }
        #expect(fired)
        #expect(loop.wakeUps > before)
    }
}
#endif
