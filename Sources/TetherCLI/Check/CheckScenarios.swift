#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherPOSIX
import TetherTestServer
import TetherTesting

/// The bodies of the acceptance scenarios. Each one drives a real client against the embedded server over
/// loopback, waits on recorded events (never on sleeps), and states its expectations from the client's event
/// records and the server's recording.
enum CheckScenarios {
    /// A scenario: it runs against `run`'s server and client, and throws when it cannot go on.
    typealias Body = @Sendable (ScenarioRun) async throws(CheckFailure) -> Void

    // MARK: Heartbeat

    static func normalPong(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.normal)
        let (client, recorder) = try run.client(url: server.url(path: "/normal"))
        await client.start()
        let records = try await run.wait(recorder, "two pongs") { $0.records.of(.pong).count >= 2 }.records
        let opened = records.first(.opened)
        let ping = records.first(.ping)
        let pongs = records.of(.pong)
        run.expect(opened?.generation == 1, "opened on generation 1", "gen \(opened?.generation ?? 0)")
        run.expect(
            ping.map { $0.time - (opened?.time ?? 0) },
            in: run.timing.interval...(run.timing.interval + run.timing.tolerance),
            "first ping one interval after the open")
        run.expect(pongs.allSatisfy { $0.rtt != nil }, "every pong carries its RTT",
                   pongs.map { "\($0.rtt ?? -1) ms" }.joined(separator: ", "))
        run.expect(records.of(.closed).isEmpty, "no close", "\(records.of(.closed).count) closes")
        let state = await client.state
        run.expect(state.phase == .open && state.lastRTT != nil, "state open with last RTT",
                   "\(state.phase.name), last RTT \(state.lastRTT.map(String.init) ?? "none")")
        // The server records a pong after its bytes are written, so the client can hold it first: wait for the
        // server's record (a wait that times out leaves the count as it is, and the expectation says so).
        _ = try? await run.wait(server, "the server's pongs") {
            ($0.first { $0.index == 1 }?.pongsSent.count ?? 0) >= 2
        }
        let pongsSent = server.connection(1)?.pongsSent.count ?? 0
        run.expect(pongsSent >= 2, "server answered the pings", "\(pongsSent) pongs sent")
        run.note("rtt", pongs.map { "\($0.rtt ?? 0)ms" }.joined(separator: ","))
        run.note("phase", state.phase.name)
        Self.expectTimings(run, on: opened, lastTCP: .connected, upgraded: true)
    }

    static func pongDelayInside(_ run: ScenarioRun) async throws(CheckFailure) {
        let delay = run.timing.timeout * 3 / 10
        let server = try run.server(.pongDelay(milliseconds: delay))
        let (client, recorder) = try run.client(url: server.url(path: "/slow"))
        await client.start()
        let records = try await run.wait(recorder, "two delayed pongs") { $0.records.of(.pong).count >= 2 }.records
        let rtts = records.of(.pong).compactMap(\.rtt)
        run.expect(rtts.count >= 2 && rtts.allSatisfy { $0 >= delay && $0 < run.timing.timeout },
                   "RTT at least the delay and under the timeout",
                   "RTTs \(rtts.map(String.init).joined(separator: ", ")) ms; "
                       + "delay \(delay), timeout \(run.timing.timeout)")
        run.expect(records.of(.closed).isEmpty, "no close", "\(records.of(.closed).count) closes")
        let state = await client.state
        run.expect(state.phase == .open && state.generation == 1, "still open on generation 1",
                   "\(state.phase.name), gen \(state.generation)")
        run.note("delay", "\(delay)ms")
        run.note("rtt", rtts.map { "\($0)ms" }.joined(separator: ","))
    }

    static func pongDelayPast(_ run: ScenarioRun) async throws(CheckFailure) {
        let timing = run.timing
        let server = try run.server(.pongDelay(milliseconds: timing.timeout * 4))
        let (client, recorder) = try run.client(url: server.url(path: "/late"))
        await client.start()
        let records = try await run.wait(recorder, "the reconnect after the pong timeout") {
            $0.records.first(.opened, generation: 2) != nil
        }.records
        let opened = records.first(.opened, generation: 1)
        let ping = records.first(.ping, generation: 1)
        let closes = records.of(.closed, generation: 1)
        let close = closes.first
        run.expect(closes.count == 1 && close?.reason == .pongTimeout && close?.code == 1001,
                   "exactly one close, reason pong_timeout, code 1001",
                   closes.map { "\($0.reason?.name ?? "?") \($0.code ?? 0)" }.joined(separator: "; "))
        let afterPing = close.flatMap { close in ping.map { close.time - $0.time } }
        run.expect(afterPing, in: timing.timeout...(timing.timeout + timing.tolerance),
                   "close one timeout after the ping")
        let afterOpen = close.flatMap { close in opened.map { close.time - $0.time } }
        let expected = timing.interval + timing.timeout
        run.expect(afterOpen, in: expected...(expected + timing.tolerance),
                   "close at interval + timeout after the open")
        let retry = records.first(.retryScheduled, generation: 1)
        run.expect(retry?.delay, in: timing.backoffBase...(timing.backoffBase * 3 / 2), "backoff delay of attempt 1")
        let connecting = records.first(.connecting, generation: 2)
        let waited = connecting.flatMap { connecting in close.map { connecting.time - $0.time } }
        let delay = retry?.delay ?? 0
        run.expect(waited, in: delay...(delay + timing.tolerance), "reconnect after the backoff delay")
        let serverClose = try await run.wait(server, "the client's close frame") {
            $0.first?.closeReceived != nil
        }.first?.closeReceived?.code
        run.expect(serverClose == 1001, "server received close 1001", "\(serverClose.map(String.init) ?? "none")")
        run.note("reason", close?.reason?.name ?? "none")
        run.note("code", String(close?.code ?? 0))
        run.note("close_after_ping", "\(afterPing ?? -1)ms")
        run.note("retry", "\(delay)ms")
        _ = client
    }

    // MARK: Server closes

    static func serverClose(_ run: ScenarioRun, code: UInt16) async throws(CheckFailure) {
        let timing = run.timing
        let server = try run.server(.close(afterMilliseconds: 30, code: code, reason: "check"))
        let (client, recorder) = try run.client(url: server.url(path: "/close"))
        await client.start()
        let records = try await run.wait(recorder, "the close") { $0.records.first(.closed) != nil }.records
        let close = records.first(.closed)
        run.expect(close?.reason == .peerClosed(code: code) && close?.code == Int(code),
                   "one close, reason peer_closed with code \(code)",
                   "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        run.note("reason", close?.reason?.name ?? "none")
        run.note("code", String(close?.code ?? 0))
        switch code {
        case 1008:
            let state = await client.state
            run.expect(close?.to == .failed && state.phase == .failed, "stops as failed", state.phase.name)
            run.expect(state.failure == .peerClosed(code: 1008), "failure visible in the state",
                       state.failure?.name ?? "none")
            run.expect(records.of(.retryScheduled).isEmpty && state.retryAt == nil, "no retry scheduled",
                       "\(records.of(.retryScheduled).count) retries")
            run.note("phase", state.phase.name)
        case 1013:
            let retry = try await run.wait(recorder, "the retry") { $0.records.first(.retryScheduled) != nil }
                .records.first(.retryScheduled)
            let throttle = SessionConfiguration().retryLaterDelay.milliseconds
            run.expect(retry?.delay, in: throttle...(throttle + timing.backoffCap),
                       "retry no sooner than the try-later delay")
            run.expect((retry?.delay ?? 0) > timing.backoffBase * 3 / 2, "longer than a plain backoff",
                       "\(retry?.delay ?? 0) ms > \(timing.backoffBase * 3 / 2) ms")
            let state = await client.state
            run.expect(state.phase == .waiting && state.retryAt != nil, "waiting for the retry", state.phase.name)
            run.note("retry", "\(retry?.delay ?? 0)ms")
        default:
            let later = try await run.wait(recorder, "the reconnect") {
                $0.records.first(.connecting, generation: 2) != nil
            }.records
            let retry = later.first(.retryScheduled)
            run.expect(retry?.delay, in: timing.backoffBase...(timing.backoffBase * 3 / 2),
                       "backoff delay of attempt 1")
            let connecting = later.first(.connecting, generation: 2)
            let waited = connecting.flatMap { connecting in close.map { connecting.time - $0.time } }
            let delay = retry?.delay ?? 0
            run.expect(waited, in: delay...(delay + timing.tolerance), "reconnect after the delay")
            run.note("retry", "\(delay)ms")
        }
        let serverEnd = try await run.wait(server, "the end of the server's connection") {
            $0.first?.hasEnded == true
        }.first
        run.expect(serverEnd?.closeSent?.code == code, "server sent close \(code)",
                   serverEnd?.end.map { "\($0.reason)" } ?? "not ended")
    }

    // MARK: Connection failures

    static func connectionRefused(_ run: ScenarioRun) async throws(CheckFailure) {
        let timing = run.timing
        let port = try await run.refusedPort()
        let (client, recorder) = try run.client(url: "ws://127.0.0.1:\(port)/refused")
        await client.start()
        let records = try await run.wait(recorder, "three retries") { $0.records.of(.retryScheduled).count >= 3 }
            .records
        let closes = records.of(.closed)
        // Refused at the one address tried, which the reason lists.
        let refused = CloseReason.connectFailed(
            .refused, tried: [ConnectAttempt(address: "127.0.0.1:\(port)", failure: .refused)])
        run.expect(closes.prefix(3).allSatisfy { $0.reason == refused },
                   "every attempt ends connect_failed (refused at 127.0.0.1:\(port))",
                   closes.prefix(3).map { $0.reason.map { "\($0.name) \($0.detail ?? "")" } ?? "?" }
                       .joined(separator: ", "))
        let retries = Array(records.of(.retryScheduled).prefix(3))
        let delays = retries.compactMap(\.delay)
        for (index, delay) in delays.enumerated() {
            let base = timing.backoffBase << index
            run.expect(delay, in: base...(base * 3 / 2), "delay of attempt \(index + 1)")
        }
        run.expect(delays.count == 3 && delays[0] < delays[1] && delays[1] < delays[2], "delays grow",
                   delays.map { "\($0) ms" }.joined(separator: " < "))
        run.expect(retries.map(\.attempt) == [1, 2, 3], "attempts count 1, 2, 3",
                   retries.map { String($0.attempt ?? 0) }.joined(separator: ", "))
        run.note("reason", closes.first?.reason?.name ?? "none")
        run.note("delays", delays.map { "\($0)ms" }.joined(separator: ","))
        Self.expectTimings(run, on: closes.first, lastTCP: .failed(.refused), upgraded: false)
        _ = client
    }

    static func handshake503(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.reject(status: 503, retryAfterSeconds: 1))
        let (client, recorder) = try run.client(url: server.url(path: "/busy"))
        await client.start()
        let records = try await run.wait(recorder, "the retry after Retry-After") {
            $0.records.first(.connecting, generation: 2) != nil
        }.records
        let close = records.first(.closed)
        run.expect(close?.reason == .handshakeRejected(status: 503) && close?.code == 503,
                   "close reason handshake_rejected, status 503",
                   "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        let retry = records.first(.retryScheduled)
        run.expect(retry?.delay, in: 1000...(1000 + run.timing.backoffCap), "retry waits Retry-After (1 s)")
        let connecting = records.first(.connecting, generation: 2)
        let waited = connecting.flatMap { connecting in close.map { connecting.time - $0.time } }
        run.expect(waited, in: 1000...(1000 + run.timing.backoffCap + run.timing.tolerance), "next attempt after 1 s")
        let connections = try await run.wait(server, "the second handshake") { $0.count >= 2 }
        let gap = connections[1].acceptedAt - connections[0].acceptedAt
        run.expect(gap >= 1000, "server saw the second attempt at least 1 s later", "\(gap) ms")
        run.note("reason", close?.reason?.name ?? "none")
        run.note("code", String(close?.code ?? 0))
        run.note("retry", "\(retry?.delay ?? 0)ms")
        _ = client
    }

    static func handshake401(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.reject(status: 401))
        let (client, recorder) = try run.client(url: server.url(path: "/private"))
        await client.start()
        let records = try await run.wait(recorder, "the rejection") { $0.records.first(.closed) != nil }.records
        let close = records.first(.closed)
        let state = await client.state
        run.expect(close?.reason == .handshakeRejected(status: 401) && close?.code == 401,
                   "close reason handshake_rejected, status 401",
                   "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        run.expect(state.phase == .failed && state.failure == .handshakeRejected(status: 401),
                   "failed with a visible reason", "\(state.phase.name), \(state.failure?.name ?? "none")")
        run.expect(records.of(.retryScheduled).isEmpty && state.retryAt == nil, "no retry",
                   "\(records.of(.retryScheduled).count) retries")
        run.expect(server.connections.count == 1, "one handshake only", "\(server.connections.count)")
        run.note("reason", close?.reason?.name ?? "none")
        run.note("code", String(close?.code ?? 0))
        run.note("phase", state.phase.name)
    }

    // MARK: Receive loop

    static func receiveLoop(_ run: ScenarioRun) async throws(CheckFailure) {
        let count = 2_000
        let server = try run.server(.send(count: count, size: 256).pinging(everyMilliseconds: 2))
        // The pong deadline is not what this scenario checks: a debug build on a busy machine may take longer
        // than the check's 100 ms to work through the messages queued ahead of a pong.
        let (client, recorder) = try run.client(url: server.url(path: "/stream"), heartbeatTimeout: 2_000)
        await client.start()
        let snapshot = try await run.wait(recorder, "\(count) messages and a pong after them") { snapshot in
            guard snapshot.messages.count >= count, let last = snapshot.records.of(.message).last else { return false }
            return snapshot.records.contains { $0.kind == .pong && $0.time >= last.time }
        }
        let inOrder = Self.leadingRunInOrder(snapshot.messages)
        run.expect(snapshot.messages.count == count, "every message delivered",
                   "\(snapshot.messages.count) of \(count)")
        run.expect(inOrder == count, "in order", "\(inOrder) in order")
        let messageRecords = snapshot.records.of(.message)
        run.expect(messageRecords.count == count && messageRecords.allSatisfy { $0.bytes == 256 },
                   "a message record with its size for each", "\(messageRecords.count) records")
        run.expect(snapshot.records.of(.closed).isEmpty, "no close", "\(snapshot.records.of(.closed).count)")
        let record = try await run.wait(server, "a pong answering a server ping") {
            ($0.first?.pongsReceived.count ?? 0) >= 1
        }.first
        let pings = record?.pingsSent.count ?? 0
        let answered = record?.pongsReceived.count ?? 0
        run.expect(answered >= 1, "server pings (every 2 ms) answered", "\(answered) of \(pings)")
        let clientPongs = snapshot.records.of(.pong).count
        run.expect(clientPongs >= 1, "heartbeat kept working", "\(clientPongs) pongs")
        run.note("messages", "\(inOrder)/\(count)")
        run.note("server_pings_answered", String(answered))
        run.note("pongs", String(clientPongs))
        _ = client
    }

    /// How many messages, from the first, carry their own index as their leading number (`TestServer`'s stream
    /// sends `"<i>."` followed by padding): the length of the run received in order.
    static func leadingRunInOrder(_ messages: [WebSocketMessage]) -> Int {
        var count = 0
        for message in messages {
            guard Self.leadingNumber(of: message) == count else { break }
            count += 1
        }
        return count
    }

    /// The leading decimal number of a message (`"17....."`), or nil (also when it does not fit an `Int`).
    static func leadingNumber(of message: WebSocketMessage) -> Int? {
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let digits: [UInt8] =
            switch message {
            case .text(let text): Array(text.utf8.prefix(20).prefix(while: isDigit))
            case .binary(let data): Array(data.prefix(20).prefix(while: isDigit))
            }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    // MARK: Generations

    static func staleCallbacks(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(describedAs: "connection 1 closes with 1000 after 30 ms; then normal") { context in
            context.index == 1 ? .close(afterMilliseconds: 30, code: 1000) : .normal
        }
        let transport = LateCallbackTransport(wrapping: SocketTransport(loop: ScenarioRun.loop))
        let (client, recorder) = try run.client(url: server.url(path: "/stale"), transport: transport)
        // If a step fails, the held streams must end before the cleanup's `stop()` waits for the readers.
        run.onCleanup { transport.release() }
        await client.start()
        try await run.wait(recorder, "a healthy second connection") {
            $0.records.first(.pong, generation: 2) != nil
        }
        let before = await client.state
        let staleBefore = await client.staleEvents
        let seen = recorder.snapshot.records.count
        let messagesBefore = recorder.snapshot.messages.count
        // Callbacks the old connection's platform task might still deliver after the new one opened.
        run.mark("late callbacks into g1")
        let injected = [
            transport.inject(.opened(subprotocol: nil), into: 0),
            transport.inject(.pong(id: 1), into: 0),
            transport.inject(.message(.text("late")), into: 0),
            transport.inject(.ended(.peerClosed(code: 1011)), into: 0),
        ]
        run.expect(injected.allSatisfy { $0 }, "four late callbacks injected into generation 1",
                   "\(injected.filter { $0 }.count) accepted")
        // Waits for what it checks: the four stale records (each late callback handled), and two more pongs of
        // generation 2 (the session stayed healthy through them). Two pongs alone were a race: a late callback
        // travels through its own reader task, which a busy machine can run after the next heartbeats.
        let after = try await run.wait(recorder, "four stale records and two more pongs of generation 2") { snapshot in
            let new = snapshot.records.dropFirst(seen)
            return new.filter { $0.kind == .stale }.count >= 4
                && new.filter { $0.kind == .pong && $0.generation == 2 }.count >= 2
        }
        let state = await client.state
        let ignored = await client.staleEvents - staleBefore
        let newRecords = Array(after.records.dropFirst(seen))
        run.expect(state.phase == .open && state.generation == before.generation && state.generation == 2,
                   "state and generation unchanged", "\(state.phase.name), gen \(state.generation)")
        let staleRecords = newRecords.filter { $0.kind == .stale }
        run.expect(newRecords.allSatisfy { ($0.generation == 2 || $0.kind == .stale) && $0.kind != .closed },
                   "no record for generation 1 but its stale records, no close of generation 2",
                   newRecords.map { "\($0.kind.rawValue)@\($0.generation)" }.joined(separator: " "))
        run.expect(after.messages.count == messagesBefore, "the late message was not delivered",
                   "\(after.messages.count) messages")
        // All four reach the machine: the message is discarded by its decision, the others ignored; each is
        // counted and leaves a stale record naming what was ignored.
        let ignoredKinds = staleRecords.compactMap { $0.ignored?.rawValue }
        run.expect(ignored == 4 && ignoredKinds == ["opened", "pong", "message", "ended"]
                       && staleRecords.allSatisfy { $0.generation == 1 },
                   "the four late callbacks were ignored as stale, each counted and recorded",
                   "\(ignored) stale events, records: \(ignoredKinds.joined(separator: ","))")
        let secondClose = server.connection(2)?.closeReceived
        run.expect(secondClose == nil, "the server saw no close on connection 2",
                   secondClose.map { "\($0.code ?? 0)" } ?? "none")
        run.note("gen", "\(before.generation)→\(state.generation)")
        run.note("phase", state.phase.name)
        run.note("injected", "opened,pong,message,ended(1011)")
        run.note("stale_ignored", String(ignored))
        // `stop()` waits for every reader; the held streams end only on release, after the session stopped.
        let stopping = Task { await client.stop() }
        try await run.wait(recorder, "the stop") { $0.records.first(.stopped) != nil }
        transport.release()
        await stopping.value
    }

    // MARK: Stop

    static func stopConnecting(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.silentHandshake)
        let (client, recorder) = try run.client(url: server.url(path: "/silent"))
        await client.start()
        try await run.wait(server, "the upgrade request") { $0.first?.request != nil }
        let phase = await client.state.phase
        run.expect(phase == .connecting, "connecting when stopped", phase.name)
        run.mark("stop()")
        await client.stop()
        try await self.expectStopped(run, client: client, recorder: recorder, from: .connecting)
        let end = try await run.wait(server, "the server to see the socket closed") { $0.first?.hasEnded == true }
        run.expect(end.count == 1, "no further connection attempt", "\(end.count) connections")
        run.note("server_end", end.first?.end.map { "\($0.reason)" } ?? "none")
    }

    static func stopWaiting(_ run: ScenarioRun) async throws(CheckFailure) {
        let port = try await run.refusedPort()
        // A retry a minute away: with the check's short backoff, a busy machine let the retry start between the
        // phase read below and the stop (a suite run beside other tests stopped it "from connecting").
        let (client, recorder) = try run.client(url: "ws://127.0.0.1:\(port)/refused") {
            $0.backoff = BackoffPolicy(base: .seconds(60), factor: 1, cap: .seconds(60), jitterPercent: 0)
        }
        await client.start()
        try await run.wait(recorder, "a scheduled retry") { $0.records.first(.retryScheduled) != nil }
        let phase = await client.state.phase
        run.expect(phase == .waiting, "waiting when stopped", phase.name)
        run.mark("stop()")
        await client.stop()
        try await self.expectStopped(run, client: client, recorder: recorder, from: .waiting)
    }

    static func stopOpen(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.normal)
        let (client, recorder) = try run.client(url: server.url(path: "/open"))
        await client.start()
        try await run.wait(recorder, "the open") { $0.records.first(.opened) != nil }
        run.mark("stop()")
        await client.stop()
        try await self.expectStopped(run, client: client, recorder: recorder, from: .open)
        let record = try await run.wait(server, "the closing handshake") { $0.first?.hasEnded == true }.first
        run.expect(record?.closeReceived?.code == 1000, "server received close 1000",
                   record?.closeReceived.map { String($0.code ?? 0) } ?? "none")
        run.expect(record?.end?.reason == .closeHandshakeCompleted(initiatedByServer: false),
                   "closing handshake completed", record?.end.map { "\($0.reason)" } ?? "not ended")
        run.note("code", String(record?.closeReceived?.code ?? 0))
    }

    /// After `stop()` returned: stopped, no retry time, no connection left, and no event after the stop record.
    private static func expectStopped(
        _ run: ScenarioRun, client: WebSocketClient, recorder: EventRecorder, from: SessionPhase
    ) async throws(CheckFailure) {
        let records = try await run.wait(recorder, "the stopped record") { $0.records.first(.stopped) != nil }.records
        let state = await client.state
        run.expect(state.phase == .stopped && state.retryAt == nil, "stopped, no retry timer",
                   "\(state.phase.name), retryAt \(state.retryAt.map(String.init) ?? "none")")
        let stopped = records.first(.stopped)
        run.expect(stopped?.from == from, "stopped from \(from.name)", stopped?.from.name ?? "none")
        let close = records.last(where: { $0.kind == .closed })
        if from == .waiting {
            run.expect(close?.reason != .userStopped, "nothing to close while waiting", close?.reason?.name ?? "none")
        } else {
            run.expect(close?.reason == .userStopped, "the connection closed as user_stopped",
                       "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        }
        run.note("stopped_from", from.name)
        run.note("phase", state.phase.name)
    }

    // MARK: Path

    static func pathLoss(_ run: ScenarioRun) async throws(CheckFailure) {
        let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi])
        let offline = PathSnapshot(status: .unsatisfied)
        let monitor = ScriptedPathMonitor(current: wifi)
        // The server closes connection 1 once the path is offline, not at a time: on a busy machine a close timed
        // from the accept could come before the path change it must follow.
        let description = "normal; connection 1 closed with 1001 once the path is offline"
        let server = try run.server(describedAs: description) { _ in .normal }
        let (client, recorder) = try run.client(url: server.url(path: "/path"), pathMonitoring: .custom { monitor })
        await client.start()
        try await run.wait(recorder, "the open") { $0.records.first(.opened) != nil }
        run.mark("path: offline")
        monitor.deliver(offline)
        try await run.wait(recorder, "the path going unavailable") {
            $0.records.contains { $0.kind == .path && $0.path == .unavailable }
        }
        let whileOpen = await client.state
        run.expect(whileOpen.phase == .open, "the hint alone does not close a working connection",
                   whileOpen.phase.name)
        let closing: Bool
        do {
            closing = try await server.close(connection: 1, code: 1001)
        } catch {
            throw .setup("closing connection 1: \(error)")
        }
        guard closing else { throw .setup("connection 1 was not open for the server to close") }
        let offlineRecords = try await run.wait(recorder, "the connection to end while offline") {
            $0.records.first(.closed) != nil
        }.records
        let close = offlineRecords.first(.closed)
        let offlineState = await client.state
        run.expect(close?.to == .offline && offlineState.phase == .offline, "goes offline instead of retrying",
                   "\(close?.to.name ?? "none"), \(offlineState.phase.name)")
        run.expect(offlineRecords.of(.retryScheduled).isEmpty && offlineState.attempts == 0,
                   "no attempt used while offline", "attempts \(offlineState.attempts)")
        // Stay offline for several backoff delays: this is the period under test (nothing may happen in it),
        // not a wait for something to happen.
        let hold = run.timing.backoffBase * 4
        try? await Task.sleep(for: .milliseconds(hold))
        let held = await client.state
        let attemptsOffline = recorder.snapshot.records.of(.connecting).count - 1
        run.expect(held.phase == .offline && attemptsOffline == 0 && server.connections.count == 1,
                   "no connection attempt during \(hold) ms offline",
                   "\(held.phase.name), \(attemptsOffline) attempts, \(server.connections.count) connections")
        run.mark("path: wifi")
        monitor.deliver(wifi)
        let records = try await run.wait(recorder, "the reconnect on recovery") {
            $0.records.first(.opened, generation: 2) != nil
        }.records
        let back = records.last { $0.kind == .path && $0.path == .available }
        let connecting = records.first(.connecting, generation: 2)
        let gap = connecting.flatMap { connecting in back.map { connecting.time - $0.time } }
        run.expect(gap, in: 0...run.timing.tolerance, "reconnects at once when the path returns")
        run.expect(connecting?.attempt == 0, "attempt counter still 0", "\(connecting?.attempt ?? -1)")
        run.expect(server.connections.count == 2, "two connections in all", "\(server.connections.count)")
        run.note("close", "\(close?.reason?.name ?? "none") \(close?.code ?? 0)")
        run.note("reconnect_after_path", "\(gap ?? -1)ms")
        run.note("attempts", String(offlineState.attempts))
    }

    // MARK: TLS

    /// A throw-away CA made in memory for the TLS scenarios, and the options of a client that trusts it.
    private static func privateAuthority() -> (TestCertificateAuthority, TLSOptions) {
        let authority = TestCertificateAuthority(commonName: "tether check CA")
        let trusting = TLSOptions(additionalTrustRoots: [.pem(Data(authority.certificate.certificatePEM))])
        return (authority, trusting)
    }

    static func tls(_ run: ScenarioRun) async throws(CheckFailure) {
        let (authority, trusting) = Self.privateAuthority()
        let certificate = authority.issue(hosts: ["127.0.0.1"])
        let server = try run.server(.echo, tls: certificate.serverTLS)
        var pinned = trusting
        pinned.pins = [certificate.pin]
        let (client, recorder) = try run.client(url: server.url(path: "/secure"), tls: pinned)
        await client.start()
        _ = try await run.wait(recorder, "two pongs over TLS") { $0.records.of(.pong).count >= 2 }
        do {
            try await client.send(text: "sealed")
        } catch {
            throw .setup("send over TLS: \(error)")
        }
        let records = try await run.wait(recorder, "the echo") { !$0.messages.isEmpty }.records
        let opened = records.first(.opened)
        let pongs = records.of(.pong)
        let echoed = await recorder.wait { !$0.messages.isEmpty }?.messages.first
        run.expect(server.url().hasPrefix("wss://"), "the server speaks TLS", server.url())
        run.expect(opened?.generation == 1, "opened on generation 1 after verifying chain, address and pin",
                   "gen \(opened?.generation ?? 0)")
        run.expect(pongs.count >= 2 && pongs.allSatisfy { $0.rtt != nil }, "heartbeat pongs with RTT over TLS",
                   pongs.map { "\($0.rtt ?? -1) ms" }.joined(separator: ", "))
        run.expect(echoed == .text("sealed"), "a message echoed through TLS", "\(echoed.map { "\($0)" } ?? "none")")
        run.expect(records.of(.closed).isEmpty, "no close", "\(records.of(.closed).count) closes")
        let pingsSeen = server.connection(1)?.pingsReceived.total ?? 0
        run.expect(pingsSeen >= 2, "the server decrypted the pings", "\(pingsSeen) pings")
        run.note("scheme", "wss")
        run.note("pin", "leaf SPKI")
        run.note("rtt", pongs.map { "\($0.rtt ?? 0)ms" }.joined(separator: ","))
        // A context of its own (the pin): the first connection's TLS is a full handshake.
        run.expect(opened?.timings?.tls?.finished == true && opened?.timings?.tlsHandshake == .full,
                   "the opened record times a full TLS handshake", opened?.timings.map { "\($0)" } ?? "none")
        Self.expectTimings(run, on: opened, lastTCP: .connected, upgraded: true)
    }

    static func tlsBadCertificate(_ run: ScenarioRun) async throws(CheckFailure) {
        let (authority, trusting) = Self.privateAuthority()
        let server = try run.server(.normal, tls: authority.issue(hosts: ["wrong.example"]).serverTLS)
        let (client, recorder) = try run.client(url: server.url(path: "/secure"), tls: trusting)
        await client.start()
        let records = try await run.wait(recorder, "the TLS failure") { $0.records.first(.closed) != nil }.records
        let close = records.first(.closed)
        let state = await client.state
        run.expect(close?.reason == .tlsFailed(detail: "hostname mismatch"),
                   "close reason tls_failed, hostname mismatch",
                   "\(close?.reason?.name ?? "none") \(close?.reason?.detail ?? "")")
        run.expect(records.of(.opened).isEmpty, "never open", "\(records.of(.opened).count) opens")
        run.expect(state.phase == .failed && state.failure == .tlsFailed(detail: "hostname mismatch"),
                   "failed with a visible reason", "\(state.phase.name), \(state.failure?.name ?? "none")")
        run.expect(records.of(.retryScheduled).isEmpty && state.retryAt == nil, "no retry",
                   "\(records.of(.retryScheduled).count) retries")
        let request = server.connection(1)?.request
        run.expect(server.connections.count == 1 && request == nil, "one TLS handshake, no upgrade request sent",
                   "\(server.connections.count) connections, request \(request == nil ? "none" : "sent")")
        run.note("reason", close?.reason?.name ?? "none")
        run.note("detail", close?.reason?.detail ?? "none")
        run.note("phase", state.phase.name)
    }

    static func mutualTLS(_ run: ScenarioRun) async throws(CheckFailure) {
        let (authority, trusting) = Self.privateAuthority()
        let clientAuthority = TestCertificateAuthority(commonName: "tether check client CA")
        let server = try run.server(
            .echo, tls: authority.issue(hosts: ["127.0.0.1"])
                .serverTLS(requiringClientCertificatesFrom: clientAuthority.certificate))
        let device = clientAuthority.issueClient(commonName: "tether-check-device")
        var presenting = trusting
        presenting.clientIdentity = .pem(
            certificateChain: .pem(Data(device.certificatePEM)), privateKey: .pem(Data(device.privateKeyPEM)))
        let (client, recorder) = try run.client(url: server.url(path: "/mutual"), tls: presenting)
        await client.start()
        // The first pong: open (the `opened` record can come just before the state says so) and heartbeating.
        _ = try await run.wait(recorder, "a pong over mutual TLS") { !$0.records.of(.pong).isEmpty }
        do {
            try await client.send(text: "from a known device")
        } catch {
            throw .setup("send over mutual TLS: \(error)")
        }
        let echoed = try await run.wait(recorder, "the echo") { !$0.messages.isEmpty }.messages.first
        let subject = server.connection(1)?.clientCertificateSubject
        run.expect(subject == "CN=tether-check-device",
                   "the server verified the client certificate and saw its subject", subject ?? "none")
        run.expect(echoed == .text("from a known device"), "a message echoed through mutual TLS",
                   "\(echoed.map { "\($0)" } ?? "none")")
        await client.stop()

        // Without a certificate: refused, typed, and not retried.
        let (anonymous, anonymousRecorder) = try run.client(url: server.url(path: "/mutual"), tls: trusting)
        await anonymous.start()
        let records = try await run.wait(anonymousRecorder, "the refusal") { $0.records.first(.closed) != nil }.records
        let close = records.first(.closed)
        let state = await anonymous.state
        let required = CloseReason.tlsFailed(detail: "client certificate required")
        run.expect(close?.reason == required, "without a certificate: tls_failed, client certificate required",
                   "\(close?.reason?.name ?? "none") \(close?.reason?.detail ?? "")")
        run.expect(state.phase == .failed && records.of(.retryScheduled).isEmpty, "failed at once, no retry",
                   "\(state.phase.name), \(records.of(.retryScheduled).count) retries")
        let refused = server.connection(2)
        run.expect(refused?.request == nil && server.connections.count == 2, "no upgrade request without a certificate",
                   "\(server.connections.count) connections, request \(refused?.request == nil ? "none" : "sent")")
        run.note("subject", subject ?? "none")
        run.note("without_certificate", close?.reason?.detail ?? "none")
    }

    // MARK: Session semantics (issue 16)

    static func backgroundKeep(_ run: ScenarioRun) async throws(CheckFailure) {
        let count = 20
        let server = try run.server(.send(count: count, size: 8, everyMilliseconds: 30))
        let (client, recorder) = try run.client(url: server.url(path: "/keep"), heartbeatTimeout: 2_000) {
            $0.lifecycle = .keepAndProbe
        }
        await client.start()
        try await run.wait(recorder, "the first message") { !$0.messages.isEmpty }
        run.mark("enterBackground()")
        await client.enterBackground()
        let done = try await run.wait(recorder, "\(count) messages") { $0.messages.count >= count }
        let inOrder = self.leadingRunInOrder(done.messages)
        let background = done.events.firstIndex {
            if case .record(let record) = $0 { return record.kind == .background }
            return false
        } ?? done.events.endIndex
        let inBackground = done.events[background...].count {
            if case .message = $0 { return true }
            return false
        }
        let state = await client.state
        let stale = await client.staleEvents
        run.expect(inOrder == count, "every message delivered, in order", "\(inOrder)/\(count)")
        run.expect(inBackground >= 1, "messages delivered while suspended", "\(inBackground)")
        run.expect(state.phase == .suspended, "still suspended, the connection kept", state.phase.name)
        run.expect(stale == 0, "nothing discarded as stale", "\(stale)")
        run.note("messages", "\(inOrder)/\(count)")
        run.note("in_background", String(inBackground))
    }

    static func reconnectOffline(_ run: ScenarioRun) async throws(CheckFailure) {
        let monitor = ScriptedPathMonitor(current: PathSnapshot(status: .unsatisfied))
        let server = try run.server(describedAs: "connection 1 closes with 1011 after 50 ms; then normal") {
            $0.index == 1 ? .close(afterMilliseconds: 50, code: 1011) : .normal
        }
        let (client, recorder) = try run.client(url: server.url(path: "/retry"), pathMonitoring: .custom { monitor })
        await client.start()
        try await run.wait(recorder, "offline") { snapshot in
            snapshot.events.contains {
                if case .stateChanged(let state, _) = $0 { state.phase == .offline } else { false }
            }
        }
        let offline = await client.state
        run.expect(offline.connectivity == .offline, "shown as no network", offline.connectivity.name)
        run.mark("reconnectNow()")
        await client.reconnectNow()
        let records = try await run.wait(recorder, "the user's attempt to open") {
            $0.records.first(.opened, generation: 2) != nil
        }.records
        let state = await client.state
        run.expect(records.first(.reconnectRequested)?.from == .offline, "the attempt went out from offline",
                   records.first(.reconnectRequested)?.from.name ?? "none")
        run.expect(server.connections.count == 2, "it reached the server", "\(server.connections.count) connections")
        run.expect(state.path == .unavailable && state.connectivity == .online,
                   "the path still says unavailable, connectivity says online",
                   "path \(state.path.name), \(state.connectivity.name)")
        run.expect(state.attempts == offline.attempts, "the user's attempt counted nothing",
                   "\(offline.attempts) -> \(state.attempts)")
        run.note("path", state.path.name)
        run.note("connectivity", state.connectivity.name)
    }

    static func outboxRestart(_ run: ScenarioRun) async throws(CheckFailure) {
        let scenario = Scenario.normal.recordingPayloads()
        let first = try run.server(scenario)
        let port = first.port
        let (client, recorder) = try run.client(url: first.url(path: "/chat")) {
            $0.greeting = { [.text("auth"), .text("subscribe")] }
        }
        await client.start()
        try await run.wait(recorder, "the open") { $0.records.first(.opened) != nil }
        try await run.wait(first, "the greeting") { ($0.first?.messageCount ?? 0) >= 2 }
        run.mark("server stopped")
        await first.stop()
        try await run.wait(recorder, "the close") { $0.records.first(.closed) != nil }
        var queuedError: String?
        for index in 0..<5 {
            do {
                try await client.send(.text("q\(index)"), policy: .queued(expiresAfter: nil))
            } catch {
                queuedError = "\(error)"
            }
        }
        run.expect(queuedError == nil, "five messages queued while disconnected", queuedError ?? "queued")
        run.mark("server restarted")
        let second: TestServer
        do {
            second = try TestServer(configuration: .init(port: port), scenario: { _ in scenario })
        } catch {
            throw .setup("restarted test server: \(error)")
        }
        run.onCleanup { await second.stop() }
        try await run.wait(second, "the greeting and the queue on the new server") {
            ($0.first?.messageCount ?? 0) >= 7
        }
        let payloads = (second.connection(1)?.messages.elements ?? []).map {
            String(decoding: $0.payload ?? [], as: UTF8.self)
        }
        let expected = ["auth", "subscribe", "q0", "q1", "q2", "q3", "q4"]
        run.expect(payloads == expected, "greeting first, then the queue in order",
                   payloads.joined(separator: ","))
        run.note("received", payloads.joined(separator: ","))
    }

    static func retryGiveUp(_ run: ScenarioRun) async throws(CheckFailure) {
        let server = try run.server(.reject(status: 500))
        let (client, recorder) = try run.client(url: server.url(path: "/bounded")) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3)
        }
        await client.start()
        let records = try await run.wait(recorder, "the give-up") { $0.records.first(.gaveUp) != nil }.records
        let state = await client.state
        let gaveUp = records.first(.gaveUp)
        run.expect(state.phase == .failed && state.failure == .handshakeRejected(status: 500),
                   "failed visibly with the last failure", "\(state.phase.name) \(state.failure?.name ?? "none")")
        run.expect(gaveUp?.attempt == 3, "after 3 attempts", "\(gaveUp?.attempt ?? -1)")
        run.expect(server.connections.count == 3, "three attempts reached the server",
                   "\(server.connections.count)")
        run.expect(records.of(.retryScheduled).count == 2, "two retries before giving up",
                   "\(records.of(.retryScheduled).count)")
        run.note("attempts", String(gaveUp?.attempt ?? -1))
        run.note("connectivity", state.connectivity.name)
    }
}
#endif
