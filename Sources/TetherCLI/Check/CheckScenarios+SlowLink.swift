#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer

/// A large message over a slow link (docs/session.md, "What the heartbeat counts as proof of life"): the pong the
/// server owes arrives behind the message, so the client must not close the connection while its bytes arrive.
extension CheckScenarios {
    // MARK: Slow link

    /// The server sends one 750 kB message through a proxy whose rate makes it take 7.5 pong timeouts (1 MB/s with the
    /// check's 100 ms timeout), the ratio of the 1.5 MB at 100 kB/s with a 1 s / 2 s heartbeat (that case at
    /// full size runs in CI: `SlowLinkRealLinkTests`).
    static func slowLink(_ run: ScenarioRun) async throws(CheckFailure) {
        let timing = run.timing
        let size = 750_000
        let transfer = timing.timeout * 15 / 2  // ms
        let rate = size * 1_000 / transfer
        let server = try run.server(.send(count: 1, size: size, kind: .binary))
        let proxy: ThrottlingProxy
        do {
            proxy = try ThrottlingProxy(upstreamPort: server.port, bytesPerSecond: rate)
        } catch {
            throw .setup("throttling proxy: \(error)")
        }
        run.onCleanup { await proxy.stop() }
        run.describeServer("one binary message of \(byteCountText(size)) through a proxy passing "
            + "\(byteCountText(rate))/s each way")
        let (client, recorder) = try run.client(url: "ws://127.0.0.1:\(proxy.port)/slow")
        await client.start()
        let arrived = try await run.wait(recorder, "the message and the pong behind it") { snapshot in
            guard let message = snapshot.records.first(.message) else { return false }
            return snapshot.records.contains { $0.kind == .pong && $0.time >= message.time }
                || !snapshot.records.of(.closed).isEmpty
        }.records
        let message = arrived.first(.message)
        let opened = arrived.first(.opened)
        let moved = arrived.of(.pongDeadlineMoved)
        let pong = arrived.first { $0.kind == .pong && $0.time >= (message?.time ?? .max) }
        let took = message.flatMap { message in opened.map { message.time - $0.time } }
        run.expect(message?.generation == 1 && message?.bytes == size, "the message arrived whole on generation 1",
                   message.map { "gen \($0.generation), \(byteCountText($0.bytes ?? 0))" } ?? "none")
        run.expect(took, in: (transfer * 4 / 5)...(transfer * 4), "it took the link's time")
        run.expect(arrived.of(.closed).isEmpty && arrived.of(.connecting).count == 1, "no close, no reconnect",
                   "\(arrived.of(.closed).map { $0.reason?.name ?? "?" }), "
                       + "\(arrived.of(.connecting).count) attempts")
        run.expect(!moved.isEmpty, "the pong deadline moved while the frame arrived",
                   "\(moved.count) moves (pong_deadline_moved)")
        run.expect((pong?.rtt ?? 0) > timing.timeout, "the pong came behind the message, past the timeout",
                   pong.map { "rtt \($0.rtt ?? 0) ms, timeout \(timing.timeout) ms" } ?? "no pong")
        run.expect(server.connections.count == 1, "the server saw one connection", "\(server.connections.count)")
        run.note("size", byteCountText(size))
        run.note("rate", "\(byteCountText(rate))/s")
        run.note("took", "\(took ?? -1)ms")
        run.note("moves", String(moved.count))
        run.note("rtt", "\(pong?.rtt ?? -1)ms")
    }
}
#endif
