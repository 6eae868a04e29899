import Foundation
import Tether
import TetherCore

/// One round of what apps do with a client, drawn from a seed: the configuration, what each sending task sends, and
/// the steps interleaved with the sends (`start`, `stop`, `reconnectNow`, the background and the foreground, path
/// changes, server-side closes and resets, readers cancelled and replaced). The same seed always gives the same
/// plan, as the session machine's random sequences do (`SplitMix64`); how the plan's steps interleave with the
/// threads of a real socket is the run's, and differs between runs.
struct UsePlan: Sendable, CustomStringConvertible {
    /// One message a sending task sends, in its task's order.
    struct Send: Sendable {
        /// Unique in the plan: the index into `UsePlan.messages`.
        let id: Int
        let task: Int
        /// Its place in its task's order, from 0.
        let sequence: Int
        let message: WebSocketMessage
        let policy: SendPolicy
        let compression: MessageCompression
        /// Refused with `.notOpen`, the task waits for the session to open (`waitUntilOpen(timeout:)`, at most
        /// `UsePlan.openWait`) before its next send, as an app's "send when open" does.
        let waitsForOpen: Bool
    }

    /// What the controlling task does, once `afterSends` sends (of any outcome) have returned or thrown.
    enum Step: Sendable, Equatable, CustomStringConvertible {
        /// `start()`, then (when `waitsForOpen`) `waitUntilOpen(timeout: UsePlan.openWait)`.
        case start(waitsForOpen: Bool)
        case stop
        case reconnectNow
        case background
        case foreground
        case path(PathSnapshot)
        /// The server closes the latest connection with this code (where the peer can be told to).
        case serverClose(UInt16)
        /// The server resets the latest connection (where the peer can be told to).
        case serverReset
        /// The reader is cancelled (its loop ends) and a new one starts reading `client.events`.
        case replaceReader
        /// A new reader starts while the current one still reads: the newest takes over, the older one ends.
        case secondReader
        /// The reader is cancelled; a new one starts once `sends` more sends returned (or once the client holds
        /// reading, its events over the inbound watermark).
        case detachReader(sends: Int)

        var description: String {
            switch self {
            case .start(let waits): waits ? "start and wait" : "start"
            case .stop: "stop"
            case .reconnectNow: "reconnectNow"
            case .background: "background"
            case .foreground: "foreground"
            case .path(let snapshot): "path \(snapshot.status) \(snapshot.interfaces)"
            case .serverClose(let code): "server close \(code)"
            case .serverReset: "server reset"
            case .replaceReader: "replace reader"
            case .secondReader: "second reader"
            case .detachReader(let sends): "detach reader for \(sends) sends"
            }
        }
    }

    let seed: UInt64
    /// permessage-deflate offered (`CompressionOptions.standard`): the seed's lowest bit.
    let compressed: Bool
    let lifecycle: LifecyclePolicy
    let interfaceSwitch: InterfaceSwitchPolicy
    /// Both the largest message the client sends (a larger one throws `.messageTooLarge`) and receives.
    let maximumMessageSize: Int
    let inboundWatermarks: Watermarks
    let outboxLimits: OutboxLimits
    /// A greeting (`UsePlan.greeting`) goes first on every open.
    let greets: Bool
    /// The client starts before the tasks send (otherwise the first sends find it stopped).
    let startsFirst: Bool
    /// Per task, its sends in order.
    let tasks: [[Send]]
    /// Every send by id.
    let messages: [Send]
    /// Which send a payload is.
    let payloads: UsePayloads
    /// In order of `afterSends`.
    let steps: [(afterSends: Int, step: Step)]
    /// The round ends by dropping the client without `stop()` (else with `stop()`).
    let endsByDropping: Bool

    /// The longest a task or a step waits for the session to open.
    static let openWait: Duration = .milliseconds(300)

    /// The greeting's one message: text no send can be (sends start with `#`).
    static let greeting = WebSocketMessage.text("greeting")

    static let wifi = PathSnapshot(status: .satisfied, interfaces: [.wifi], interfaceNames: ["wlan0"])
    static let cellular = PathSnapshot(
        status: .satisfied, isExpensive: true, interfaces: [.cellular], interfaceNames: ["rmnet0"])
    static let ethernet = PathSnapshot(status: .satisfied, interfaces: [.wiredEthernet], interfaceNames: ["eth0"])
    static let offline = PathSnapshot(status: .unsatisfied)

    /// - Parameter scale: multiplies the number of sends per task and of steps (a longer run).
    init(seed: UInt64, scale: Int = 1) {
        var random = SplitMix64(seed: seed)
        self.seed = seed
        self.compressed = seed & 1 == 1
        self.lifecycle = random.chance(50) ? .closeInBackground : .keepAndProbe
        self.interfaceSwitch =
            random.chance(50) ? .probe : .makeBeforeBreak(drain: .milliseconds(random.pick([0, 20, 100])))
        self.maximumMessageSize = random.pick([80_000, 160_000, 262_144])
        self.inboundWatermarks = random.chance(30) ? Watermarks(high: 128 << 10, low: 32 << 10) : .standard
        self.outboxLimits =
            random.chance(30) ? OutboxLimits(count: 6, bytes: 300_000) : OutboxLimits(count: 1_000, bytes: 8 << 20)
        self.greets = random.chance(30)
        self.startsFirst = random.chance(85)
        self.endsByDropping = random.chance(20)

        var payloads = UsePayloads()
        var messages: [Send] = []
        var tasks: [[Send]] = []
        for task in 0..<(2 + random.below(3)) {
            var sends: [Send] = []
            for sequence in 0..<((10 + random.below(31)) * scale) {
                let size = Self.size(&random, limit: self.maximumMessageSize)
                let message = payloads.make(id: messages.count, size: size, random: &random)
                let policy: SendPolicy =
                    switch random.below(100) {
                    case 0..<60: .now
                    case 60..<85: .queued(expiresAfter: nil)
                    default: .queued(expiresAfter: .milliseconds(1 + random.below(60)))
                    }
                let compression = random.pick([MessageCompression.automatic, .automatic, .always, .never])
                let send = Send(
                    id: messages.count, task: task, sequence: sequence, message: message, policy: policy,
                    compression: compression, waitsForOpen: random.chance(70))
                messages.append(send)
                sends.append(send)
            }
            tasks.append(sends)
        }
        self.tasks = tasks
        self.messages = messages
        self.payloads = payloads

        var steps: [(afterSends: Int, step: Step)] = []
        for _ in 0..<((6 + random.below(11)) * scale) {
            steps.append((random.below(messages.count), Self.step(&random)))
        }
        self.steps = steps.sorted { $0.afterSends < $1.afterSends }
    }

    /// From 1 byte to beyond the limit, with the edges of the frame length's encodings (125/126, 65,535/65,536), of
    /// the socket transport's 64 KiB reads, and of `limit`.
    private static func size(_ random: inout SplitMix64, limit: Int) -> Int {
        switch random.below(100) {
        case 0..<12: 1 + random.below(3)
        case 12..<35: 4 + random.below(122)
        case 35..<42: random.pick([125, 126, 127])
        case 42..<62: 128 + random.below(4_000)
        case 62..<72: 65_530 + random.below(13)
        case 72..<84: 65_543 + random.below(limit - 65_543)
        case 84..<90: limit - random.below(2)
        case 90..<94: limit + 1 + random.below(100)
        default: 200 + random.below(60_000)
        }
    }

    private static func step(_ random: inout SplitMix64) -> Step {
        switch random.below(100) {
        case 0..<12: .start(waitsForOpen: random.chance(60))
        case 12..<19: .stop
        case 19..<26: .reconnectNow
        case 26..<34: .background
        case 34..<44: .foreground
        case 44..<60: .path(random.pick([Self.offline, Self.wifi, Self.cellular, Self.ethernet]))
        case 60..<70: .serverClose(random.pick([1000, 1001, 1011, 1012, 4000, 4000, 1008]))
        case 70..<76: .serverReset
        case 76..<84: .replaceReader
        case 84..<90: .secondReader
        default: .detachReader(sends: 1 + random.below(4))
        }
    }

    var description: String {
        let sends = self.tasks.map { "\($0.count)" }.joined(separator: "+")
        return "seed \(UsePlan.hex(self.seed)): compression \(self.compressed ? "on" : "off"), \(self.lifecycle), "
            + "\(self.interfaceSwitch), maximumMessageSize \(self.maximumMessageSize), inbound high "
            + "\(self.inboundWatermarks.high), outbox \(self.outboxLimits.count)/\(self.outboxLimits.bytes), "
            + "greeting \(self.greets), \(self.startsFirst ? "started first" : "sends before start"), sends \(sends), "
            + "steps [\(self.steps.map { "\($0.afterSends): \($0.step)" }.joined(separator: ", "))], "
            + "\(self.endsByDropping ? "dropped" : "stopped") at the end"
    }

    static func hex(_ seed: UInt64) -> String {
        "0x" + String(seed, radix: 16, uppercase: true)
    }
}

extension SplitMix64 {
    mutating func below(_ bound: Int) -> Int { Int(self.next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { self.below(100) < percent }
    mutating func pick<Element>(_ elements: [Element]) -> Element { elements[self.below(elements.count)] }
}
