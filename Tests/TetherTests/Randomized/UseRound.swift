#if os(Linux)
import Foundation
import Synchronization
import Tether
import TetherCore
import TetherTesting

/// Runs one `UsePlan` against a real server over real sockets, as an app would: the client with its default
/// transport and clock, its sending tasks, a task doing the plan's steps between the sends, and readers of `events`
/// that come and go. Then it ends the client's scope (`stop()`, or dropping the client), and hands everything that
/// was observed to `UseVerdict`.
struct UseRound {
    let plan: UsePlan
    let peer: any UsePeer

    /// What the round observed; `failures` are those found while running (a reader that did not end, a client that
    /// was not released), the verdict's come on top.
    struct Observed {
        var outcomes: [Int: Result<Void, WebSocketSendError>] = [:]
        var events: [WebSocketEvent] = []
        var arrivals: [[WebSocketMessage]] = []
        var failures: [String] = []
        /// How each connection ended, when verbose.
        var transportLog: [String] = []
    }

    /// A guard against a round that never ends, not a pace: a round normally takes a second or two.
    static let roundTimeout: Duration = .seconds(120)

    func run() async -> Observed {
        let paths = UsePaths()
        var configuration = WebSocketClient.Configuration(
            url: self.peer.url,
            heartbeatInterval: .milliseconds(150),
            heartbeatTimeout: .seconds(2),
            connectTimeout: .seconds(5),
            probeTimeout: .seconds(1),
            backoff: BackoffPolicy(base: .milliseconds(10), factor: 2, cap: .milliseconds(200), jitterPercent: 50),
            retryLaterDelay: .milliseconds(20),
            maximumMessageSize: self.plan.maximumMessageSize,
            lifecycle: self.plan.lifecycle,
            closeTimeout: .seconds(1),
            pathMonitoring: .custom { paths.makeMonitor() }
        )
        configuration.compression = self.plan.compressed ? .standard : nil
        configuration.interfaceSwitch = self.plan.interfaceSwitch
        configuration.inboundWatermarks = self.plan.inboundWatermarks
        configuration.outboxLimits = self.plan.outboxLimits
        // Every unconfirmed message is kept, so that each one the verdict looks for is named.
        configuration.unconfirmedLimits = OutboxLimits(count: 1_000_000, bytes: 1 << 30)
        if self.plan.greets { configuration.greeting = { [UsePlan.greeting] } }
        let roundStart = ContinuousClock.now
        let transport = UseTransport(configuration.transport)
        configuration.transport = transport

        var observed = Observed()
        weak var released: WebSocketClient?
        let readers: UseReaders
        let stateObserver: Task<Void, Never>
        let progress = UseProgress(senders: self.plan.tasks.count)
        do {
            let client: WebSocketClient
            do {
                client = try WebSocketClient(configuration: configuration, randomSeed: self.plan.seed)
            } catch {
                observed.failures.append("the configuration was refused: \(error)")
                return observed
            }
            released = client
            readers = UseReaders(client.events)
            let states = client.states
            stateObserver = Task { for await _ in states {} }  // ends when the client is deinitialized
            readers.attach()
            if self.plan.startsFirst { await client.start() }

            let finished = await abandoning(after: Self.roundTimeout) { [plan, peer, transport] in
                await withTaskGroup(of: Void.self) { group in
                    for sends in plan.tasks {
                        group.addTask {
                            for send in sends {
                                let outcome: Result<Void, WebSocketSendError>
                                do throws(WebSocketSendError) {
                                    try await client.send(
                                        send.message, policy: send.policy, compression: send.compression)
                                    outcome = .success(())
                                } catch {
                                    outcome = .failure(error)
                                }
                                progress.sent(send.id, outcome)
                                if send.waitsForOpen, case .failure(.notOpen) = outcome {
                                    try? await client.waitUntilOpen(timeout: UsePlan.openWait)
                                }
                            }
                            progress.senderFinished()
                        }
                    }
                    group.addTask {
                        for (afterSends, step) in plan.steps {
                            await progress.wait(until: afterSends)
                            let began = ContinuousClock.now
                            await Self.perform(step, client: client, peer: peer, paths: paths, readers: readers,
                                               progress: progress)
                            transport.note("step \(step) at \(roundStart.duration(to: began)) took "
                                + "\(began.duration(to: .now))")
                        }
                    }
                }
                return true
            }
            if finished == nil {
                observed.failures.append(
                    "the sends and steps did not finish within \(Self.roundTimeout): \(progress.summary)")
                return observed
            }
            transport.note("sends and steps done at \(roundStart.duration(to: .now))")
            readers.attachIfDetached()  // so that what the end closes is read
            if !self.plan.endsByDropping {
                guard await abandoning(after: .seconds(30), { await client.stop() }) != nil else {
                    observed.failures.append("the last stop() did not return within 30 s")
                    return observed
                }
                let resources = await client.resources
                if resources != (0, 0, 0, 0, 0) {
                    observed.failures.append("after stop() the client still holds \(resources)")
                }
                client.finishEvents()
            }
        }
        transport.note("scope ended at \(roundStart.duration(to: .now))")
        // The client's scope has ended: nothing of the round holds it any more.
        if await abandoning(after: .seconds(10), { await stateObserver.value }) == nil {
            observed.failures.append("the client was not deinitialized within 10 s of its scope's end")
        } else if released != nil {
            observed.failures.append("the client's states ended but the client is still alive")
        }
        transport.note("client released at \(roundStart.duration(to: .now))")
        guard let events = await readers.finish() else {
            observed.failures.append("the last reader of events never saw their end")
            return observed
        }
        observed.failures += readers.failures
        observed.events = events
        observed.transportLog = transport.lines
        observed.outcomes = progress.outcomes
        switch await self.peer.arrivals(timeout: .seconds(15), opened: transport.opened) {
        case .success(let arrivals): observed.arrivals = arrivals
        case .failure(let failure): observed.failures.append("the server: \(failure)")
        }
        return observed
    }

    private static func perform(
        _ step: UsePlan.Step, client: WebSocketClient, peer: any UsePeer, paths: UsePaths, readers: UseReaders,
        progress: UseProgress
    ) async {
        switch step {
        case .start(let waitsForOpen):
            await client.start()
            if waitsForOpen { try? await client.waitUntilOpen(timeout: UsePlan.openWait) }
        case .stop: await client.stop()
        case .reconnectNow: await client.reconnectNow()
        case .background: await client.enterBackground()
        case .foreground: await client.enterForeground()
        case .path(let snapshot): paths.deliver(snapshot)
        case .serverClose(let code):
            try? await client.waitUntilOpen(timeout: UsePlan.openWait)  // the server closes what is open, if anything
            _ = await peer.closeLatest(code: code)
        case .serverReset:
            try? await client.waitUntilOpen(timeout: UsePlan.openWait)
            _ = await peer.resetLatest()
        case .replaceReader: await readers.replace()
        case .secondReader: await readers.takeOver()
        case .detachReader(let sends):
            await readers.detach()
            await progress.wait(until: progress.count + sends)
            readers.attach()
        }
    }
}

/// The client's path monitors: each `start()` after a `stop()` makes a new one (a monitor does not restart), which
/// begins with the latest path the plan delivered.
final class UsePaths: Sendable {
    private let state = Mutex<(current: PathSnapshot, monitor: ScriptedPathMonitor?)>((UsePlan.wifi, nil))

    func makeMonitor() -> ScriptedPathMonitor {
        self.state.withLock { state in
            let monitor = ScriptedPathMonitor(current: state.current)
            state.monitor = monitor
            return monitor
        }
    }

    func deliver(_ snapshot: PathSnapshot) {
        let monitor = self.state.withLock { state in
            state.current = snapshot
            return state.monitor
        }
        monitor?.deliver(snapshot)
    }
}

/// How each send ended, and how many have returned (or thrown), for the steps that wait for them.
final class UseProgress: Sendable {
    private struct State {
        var outcomes: [Int: Result<Void, WebSocketSendError>] = [:]
        var sent = 0
        var sendersLeft: Int
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    init(senders: Int) {
        self.state = Mutex(State(sendersLeft: senders))
    }

    var count: Int { self.state.withLock { $0.sent } }
    var outcomes: [Int: Result<Void, WebSocketSendError>] { self.state.withLock { $0.outcomes } }
    var summary: String { self.state.withLock { "\($0.sent) sends returned, \($0.sendersLeft) tasks still sending" } }

    func sent(_ id: Int, _ outcome: Result<Void, WebSocketSendError>) {
        self.update { state in
            state.outcomes[id] = outcome
            state.sent += 1
        }
    }

    func senderFinished() {
        self.update { $0.sendersLeft -= 1 }
    }

    /// Returns once `count` sends have returned, or every task has sent all it had.
    func wait(until count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = self.state.withLock { state in
                guard state.sent < count, state.sendersLeft > 0 else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let ready = self.state.withLock { state in
            change(&state)
            let done = state.sendersLeft == 0
            let (ready, waiting) = (
                state.waiters.filter { done || $0.count <= state.sent },
                state.waiters.filter { !done && $0.count > state.sent }
            )
            state.waiters = waiting
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }
}

/// The readers of `events`, as views' tasks are: each in a task of its own, holding the sequence, not the client.
/// What each read is kept in its order; the readers' lists, in the order the readers started, are the events.
final class UseReaders: Sendable {
    private final class Box: Sendable {
        let events = Mutex<[WebSocketEvent]>([])
    }

    private let sequence: WebSocketEvents
    private let state = Mutex<(readers: [(task: Task<Void, Never>, box: Box)], current: Int?, failures: [String])>(
        ([], nil, []))

    init(_ sequence: WebSocketEvents) {
        self.sequence = sequence
    }

    var failures: [String] { self.state.withLock { $0.failures } }

    /// A new reader: it takes over from the current one, if any (the newest reads).
    func attach() {
        let box = Box()
        let sequence = self.sequence
        let task = Task {
            for await event in sequence {
                box.events.withLock { $0.append(event) }
            }
        }
        self.state.withLock { state in
            state.readers.append((task, box))
            state.current = state.readers.count - 1
        }
    }

    func attachIfDetached() {
        if self.state.withLock({ $0.current == nil }) { self.attach() }
    }

    /// Cancels the current reader and waits for its loop to end (at once: a cancelled reader detaches).
    func detach() async {
        guard let task = self.state.withLock({ state -> Task<Void, Never>? in
            defer { state.current = nil }
            return state.current.map { state.readers[$0].task }
        }) else { return }
        task.cancel()
        if await abandoning(after: .seconds(10), { await task.value }) == nil {
            self.state.withLock { $0.failures.append("a cancelled reader's loop did not end") }
        }
    }

    func replace() async {
        await self.detach()
        self.attach()
    }

    /// A second reader starts while the current one reads: the current one's loop ends.
    func takeOver() async {
        let previous = self.state.withLock { state in state.current.map { state.readers[$0].task } }
        self.attach()
        guard let previous else { return }
        if await abandoning(after: .seconds(10), { await previous.value }) == nil {
            self.state.withLock { $0.failures.append("a reader did not end when a newer one took over") }
        }
    }

    /// Once the events have ended (`finishEvents()` after `stop()`, or the client's deinit), what every reader read,
    /// in order; nil when the last reader never saw the end.
    func finish() async -> [WebSocketEvent]? {
        let readers = self.state.withLock { $0.readers }
        guard let last = readers.last else { return [] }
        guard await abandoning(after: .seconds(10), { await last.task.value }) != nil else { return nil }
        return readers.flatMap { $0.box.events.withLock { $0 } }
    }
}
#endif
