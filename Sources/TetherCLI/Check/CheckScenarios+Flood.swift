#if os(Linux)
import Foundation
import Tether
import TetherCore
import TetherTestServer
import TetherWire

/// The flow-control scenarios (docs/ARCHITECTURE.md §10): a flood the consumer cannot keep up with, a peer that floods
/// pings and reads nothing. Each states its bound, measures what the client held against it, and samples the
/// process's resident memory meanwhile.
extension CheckScenarios {
    // MARK: Slow consumer

    /// The embedded server streams 64 MiB; nobody reads `events` until the client has held reading, then the consumer
    /// stays away for a while before it reads everything.
    static func slowConsumer(_ run: ScenarioRun) async throws(CheckFailure) {
        let size = 16 << 10
        let count = 4_096  // 64 MiB
        let inbound = Watermarks.standard  // the client's default
        let bound = inbound.high + Self.holdSlack(messageSize: size)
        let server = try run.server(.send(count: count, size: size, kind: .binary))
        // Message records would double the events and put 4,096 marks on the timeline: the tally counts instead.
        let client = try run.makeClient(url: server.url(path: "/flood")) { $0.recordsMessages = false }
        let reader = FloodReader()
        let recorder = run.record(reader.events)
        let memory = try run.residentMemory()
        await client.start()
        // Nobody reads `events` yet. The flood is far larger than anything the kernel buffers, so the client's
        // unread events must pass the high watermark (or grow without bound). Only the consumer of `events` hears of
        // the hold, so the peak weight is looked at instead. (Waiting on the server's progress would not do: once the
        // kernel's buffers are full when the hold comes, the server makes none.)
        try await run.poll("the client's unread events above the high watermark") {
            client.eventBufferPeakWeight > inbound.high
        }
        run.mark("unread > high")
        // The period under test: the consumer stays away, and the flood must stay held back meanwhile (no pong
        // deadline runs while reading is held, so a pause longer than the pong timeout costs no close).
        let pause = 2 * run.timing.tolerance
        try? await Task.sleep(for: .milliseconds(pause))
        let sentWhilePaused = server.connection(1)?.sentMessageBytes ?? 0
        let growthWhilePaused = memory.now - memory.baseline
        // On the client's own clock, like the hold and resume records it is compared with: the run's marks count from
        // just before the client was made, so the same instant reads up to a millisecond later there (a debug build
        // showed a resume 1 ms "before" the consumer read).
        let reading = await client.currentTime
        run.mark("consumer reads", at: reading)
        let tally = await reader.readMessages(from: client.events, count: count, limit: run.timing.waitLimit)
        reader.passOnTheRest(of: client.events)
        let records = try await run.wait(recorder, "every hold to end") { snapshot in
            let held = snapshot.records.of(.readingHeld).count
            return held > 0 && snapshot.records.of(.readingResumed).count == held
        }.records
        let peak = client.eventBufferPeakWeight
        let state = await client.state
        memory.stop()

        let total = count * size
        run.expect(sentWhilePaused < total, "the flood was held back while nobody read",
                   "\(byteCountText(sentWhilePaused)) of \(byteCountText(total)) sent after \(pause) ms unread")
        run.expect(tally.messages == count && tally.bytes == total, "every message received",
                   "\(tally.messages) of \(count), \(byteCountText(tally.bytes))")
        run.expect(tally.inOrder == count && tally.first == 0 && tally.last == count - 1, "in order",
                   "\(tally.inOrder) in order, first \(tally.first ?? -1), last \(tally.last ?? -1)")
        let holds = records.filter { $0.kind == .readingHeld || $0.kind == .readingResumed }
        let alternate = holds.enumerated().allSatisfy { index, record in
            record.kind == (index.isMultiple(of: 2) ? .readingHeld : .readingResumed)
        }
        let held = records.of(.readingHeld)
        let resumed = records.of(.readingResumed)
        let firstHeld = held.first?.time ?? -1
        let firstResumed = resumed.first?.time ?? -1
        run.expect(alternate && !held.isEmpty && firstHeld < reading && firstResumed >= reading,
                   "reading held while nobody read, resumed once the consumer caught up; each hold ended",
                   "held at \(firstHeld) ms, consumer read from \(reading) ms, resumed at \(firstResumed) ms; "
                       + "\(held.count) holds, \(resumed.count) resumes")
        run.expect(Self.pingsWhileHeld(records) == 0, "no ping while reading was held",
                   "\(Self.pingsWhileHeld(records)) pings while held, \(records.of(.ping).count) in all")
        run.expect(peak <= bound, "unread events never above high + the message that crossed it",
                   "peak \(peak) B, bound \(bound) B (\(inbound.high) + \(bound - inbound.high))")
        let growth = memory.peakGrowth
        let memoryLimit = run.timing.residentGrowthLimit
        run.expect(growth < memoryLimit, "resident memory grew by far less than the flood",
                   "peak growth \(byteCountText(growth)) (\(byteCountText(growthWhilePaused)) while paused), "
                       + "limit \(byteCountText(memoryLimit))")
        let sent = server.connection(1)?.sentMessageCount ?? 0
        run.expect(sent == count, "the server sent the whole stream", "\(sent) messages")
        run.expect(records.of(.closed).isEmpty && state.phase == .open && state.generation == 1,
                   "no close (no pong deadline ran while held): open on generation 1",
                   "\(records.of(.closed).count) closes, \(state.phase.name), gen \(state.generation); paused "
                       + "\(pause) ms, pong timeout \(run.timing.timeout) ms")
        run.note("messages", "\(tally.inOrder)/\(count)")
        run.note("held", "\(firstHeld)ms")
        run.note("resumed", "\(firstResumed)ms")
        run.note("holds", String(held.count))
        run.note("peak_unread", "\(byteCountText(peak))≤\(byteCountText(bound))")
        run.note("sent_while_paused", byteCountText(sentWhilePaused))
        run.note("rss_growth", byteCountText(growth))
    }

    /// How many ping records come between a `reading_held` record and the `reading_resumed` after it.
    static func pingsWhileHeld(_ records: [LogRecord]) -> Int {
        var held = false
        var pings = 0
        for record in records {
            switch record.kind {
            case .readingHeld: held = true
            case .readingResumed: held = false
            case .ping where held: pings += 1
            default: break
            }
        }
        return pings
    }

    /// What can follow the message that put the unread events over the high watermark: nothing more is read or
    /// handed out once the client holds (it holds as it publishes that message, between two messages of one read),
    /// so the slack is that message, weighing its payload plus the event's own size, plus a few records (the hold's
    /// own, a state change) published with it.
    static func holdSlack(messageSize size: Int) -> Int {
        (size + WebSocketEvent.bufferOverhead) + 8 * WebSocketEvent.bufferOverhead
    }

    // MARK: Ping flood

    /// A raw peer answers the upgrade, then writes pings as fast as the socket takes them and reads nothing. The
    /// client answers with pongs until the bytes it cannot write pass its outbound high watermark, then stops reading,
    /// so the peer's writes stall. Where every byte was at that moment is then accounted for from the kernel's queues
    /// and the pongs the peer reads afterwards.
    static func pingFlood(_ run: ScenarioRun) async throws(CheckFailure) {
        let outbound = Watermarks.standard  // the client's default
        let pong = PingFloodPeer.pongFrameSize
        // After the pong that crossed the high watermark, the rest of that read's pings cost one coalesced pong.
        let bound = outbound.high + 2 * pong
        let maximumPings = 400_000  // 48 MiB of pings: the bound on the peer's work if the client never pushed back
        let peer = try run.pingFloodPeer()
        let client = try run.makeClient(url: peer.url) { configuration in
            // The heartbeat is not under test: a peer that never reads never answers our pings either, which the
            // heartbeat would rightly end after an interval and a timeout. It stays out of the measurement.
            configuration.heartbeatInterval = .seconds(60)
            configuration.heartbeatTimeout = .seconds(60)
        }
        let recorder = run.record(client.events)
        let memory = try run.residentMemory()
        await client.start()
        if let failure = await peer.accept(within: run.timing.waitLimit) {
            throw .setup("ping-flood peer: \(failure)")
        }
        try await run.wait(recorder, "the open") { $0.records.first(.opened) != nil }
        let floodStart = run.mark("flood") ?? 0
        // A stall: no write for a tolerance, while the client holds more pongs than its low watermark.
        let flood = await peer.flood(
            maxPings: maximumPings, stallWindow: .milliseconds(run.timing.tolerance), queuedAbove: outbound.low,
            within: run.timing.waitLimit)
        let growth = memory.peakGrowth
        let atStall = await client.state
        let recordsAtStall = recorder.snapshot.records
        run.mark("last ping written", at: floodStart + flood.lastWriteMilliseconds)
        run.mark("stall seen; peer reads")
        // Either bound is right: a client whose pongs back up stops reading (the peer's writes stall), and one that
        // keeps up answers a read's pings with one coalesced pong behind a backlog, so it reads the whole flood
        // while what it owes stays small. Which one shows depends on how fast the kernel takes the pongs. The flood
        // ends at its count or at the time bound, whichever comes first: on a loaded machine the peer writes fewer
        // pings in the bound, and a client still reading at the bound has kept up.
        run.expect(flood.failure == nil && (flood.stalled || flood.pings == maximumPings || flood.timeBoundReached),
                   "the peer's writes stalled (the client stopped reading) or the client kept up with the flood",
                   "\(flood.pings) pings (\(byteCountText(flood.bytes))) in \(flood.milliseconds) ms, "
                       + (flood.stalled ? "then no write for \(run.timing.tolerance) ms" : "no stall")
                       + (flood.timeBoundReached ? " (the time bound ended it)" : "")
                       + (flood.failure.map { "; \($0)" } ?? ""))
        run.expect(atStall.phase == .open && atStall.generation == 1 && recordsAtStall.of(.closed).isEmpty,
                   "the session stayed open on generation 1", "\(atStall.phase.name), gen \(atStall.generation), "
                       + "\(recordsAtStall.of(.closed).count) closes")
        let memoryLimit = run.timing.residentGrowthLimit
        run.expect(growth < memoryLimit, "resident memory stayed bounded",
                   "peak growth \(byteCountText(growth)), limit \(byteCountText(memoryLimit))")
        run.note("pings_written", String(flood.pings))
        run.note("stalled", flood.stalled ? "yes" : "no")
        run.note("rss_growth", byteCountText(growth))
        guard let peerCounters = flood.peer, let clientCounters = flood.client, let clientBefore = flood.clientBefore
        else {
            run.expect(false, "the kernel's counters of both sockets could be read",
                       "TCP_INFO failed, or the client's descriptor was not found")
            return
        }

        // What the client read and wrote, counted by its kernel: after the 101, pings in; during the flood, pongs out.
        let pingsRead = (clientCounters.read - peer.handshake.response) / PingFloodPeer.pingFrameSize
        let pongBytesWritten = clientCounters.written - clientBefore.written
        let drain = await peer.drain(
            readBeforeStall: pingsRead, lastPing: flood.lastPing, within: run.timing.waitLimit)
        // The pongs the client produced before the stall answer pings it had read by then, and pongs produced later
        // answer newer pings: those the peer now counts. What the kernel did not take is still queued in the client.
        let queued = drain.pongsBeforeStall * pong - pongBytesWritten
        run.expect((!flood.stalled || queued > outbound.low) && queued <= bound,
                   "pongs queued in the client: at most high + 2 pongs (above low when it stopped reading)",
                   "\(queued) B: \(drain.pongsBeforeStall) pongs for \(pingsRead) pings read, "
                       + "\(pongBytesWritten) B of them taken by the kernel; bound \(bound) B; pings unread: "
                       + "\(clientCounters.unread) B at the client, \(peerCounters.unacknowledged) B at the peer")
        run.expect(drain.failure == nil && drain.latestAnswered == flood.lastPing && drain.otherFrames == 0,
                   "once the peer read, the client answered its latest ping",
                   "latest answered \(drain.latestAnswered) of \(flood.lastPing), \(drain.pongs) pongs in "
                       + "\(drain.milliseconds) ms" + (drain.failure.map { "; \($0)" } ?? ""))
        run.note("pings_read", String(pingsRead))
        run.note("pongs_queued", byteCountText(queued))
        run.note("coalesced", String(pingsRead - drain.pongsBeforeStall))

        run.mark("stop()")
        let stopping = ContinuousClock.now
        let limit = run.timing.waitLimit
        async let closing = peer.answerClose(within: limit)
        await client.stop()
        let stopTook = stopping.duration(to: .now).milliseconds
        let peerClose = await closing
        let records = try await run.wait(recorder, "the stopped record") { $0.records.first(.stopped) != nil }.records
        let close = records.first(.closed)
        let state = await client.state
        run.expect(close?.reason == .userStopped && close?.code == 1000 && state.phase == .stopped,
                   "stopped with close 1000",
                   "\(close?.reason?.name ?? "none") \(close?.code ?? 0), \(state.phase.name)")
        run.expect(peerClose.code == 1000 && peerClose.answered && peerClose.endOfStream && peerClose.failure == nil,
                   "closing handshake completed, then end of stream",
                   "peer got \(peerClose.code.map(String.init) ?? "no code"), answered \(peerClose.answered), "
                       + "end of stream \(peerClose.endOfStream)" + (peerClose.failure.map { "; \($0)" } ?? ""))
        run.expect(stopTook, in: 0...run.timing.tolerance, "stop() returned promptly")
        run.note("stop", "\(stopTook)ms")
    }
}
#endif
