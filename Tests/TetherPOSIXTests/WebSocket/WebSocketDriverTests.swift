#if os(Linux)
import Dispatch
import Synchronization
import Testing
@testable import TetherPOSIX
import TetherWire

/// `WebSocketDriver` over a `ScriptedByteStream`, driven as a client's senders drive it: several tasks at once on a
/// compressed connection (permessage-deflate with context takeover, where the peer inflates each message against
/// the ones before it), a kernel that stalls or fills up, a sender cancelled midway, our close and the stream's end
/// in the middle of it all. What the stream received is read back as the peer reads it, by a server-role engine.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketDriverTests {
    /// Four tasks send 400 JSON texts each at once, each awaiting its own sends, while a fifth sends pings, and every
    /// writer may be preempted as it starts its write: the peer inflates every message intact, each sender's in its
    /// order, and every ping in order.
    @Test func concurrentCompressedSendersPutEveryMessageOnTheWireIntactAndInOrder() async throws {
        let harness = try await DriverHarness.make()
        defer { harness.loop.shutdown() }
        harness.stream.writersYield()
        let senders = 4
        let count = 400
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for sequence in 0..<count {
                        let sending = harness.send(Feed.message(sender: sender, sequence: sequence))
                        guard case .started(let write) = sending else {
                            Issue.record("sender \(sender), message \(sequence): \(sending)")
                            return
                        }
                        try await write.finish()
                    }
                }
            }
            group.addTask {
                for id in 0..<UInt64(50) {
                    #expect(harness.driver.sendPing(id: id))
                    await Task.yield()  // let the senders in between the pings
                }
            }
            try await group.waitForAll()
        }
        let peer = try PeerReading(harness.stream.taken)
        #expect(peer.violation == nil)
        peer.expectIntact(senders: senders, count: count)
        #expect(peer.pings == Array(0..<50))
    }

    /// A sender stalled between its encoding and its write (preempted, or a slow kernel) is overtaken by no other
    /// frame: the second sender cannot encode until the first frame is queued, so the frames reach the wire in the
    /// order they were compressed. The two messages are alike, so that the second one's deflate refers back to the
    /// first: inflated in the wrong order, it fails.
    @Test func aSenderStalledBetweenEncodingAndWritingIsOvertakenByNoFrame() async throws {
        let harness = try await DriverHarness.make()
        defer { harness.loop.shutdown() }
        // The first write holds its thread until a second write arrives, or for 300 ms: a driver that lets a frame
        // overtake another would put the second one on the wire first.
        let held = DispatchSemaphore(value: 0)
        harness.stream.holdFirstWrite(upTo: .milliseconds(300)) { held.signal() }
        let first = Feed.message(sender: 0, sequence: 0)
        let second = Feed.message(sender: 1, sequence: 0)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Self.onOwnThread { _ = harness.send(first) }
            }
            group.addTask {
                await Self.onOwnThread {
                    held.wait()  // the first sender has encoded its message and its write is held
                    _ = harness.send(second)
                }
            }
        }
        let peer = try PeerReading(harness.stream.taken)
        #expect(peer.violation == nil)
        #expect(peer.texts == [first, second])
    }

    /// With a slow peer (the kernel takes 64 bytes per step of the loop) and small watermarks, four senders wait for
    /// room: every message arrives intact and in each sender's order, and the queue never grows past the high
    /// watermark by more than one frame per sender (a woken sender writes without checking again).
    @Test func sendersWaitingForRoomKeepTheQueueBoundedAndEveryMessageIntact() async throws {
        let outbound = Watermarks(high: 256, low: 64)
        let harness = try await DriverHarness.make(outbound: outbound)
        defer { harness.loop.shutdown() }
        harness.stream.kernelDrains(bytesPerStep: 64)
        harness.stream.writersYield()
        let senders = 4
        let count = 100
        // A frame is at most its text and a 14-byte header.
        let largestFrame = (0..<senders).map {
            Feed.message(sender: $0, sequence: count, padding: 40, noisy: true).utf8.count + 14
        }.max() ?? 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for sequence in 0..<count {
                        try await harness.sendWaitingForRoom(
                            Feed.message(sender: sender, sequence: sequence, padding: 40, noisy: true))
                    }
                }
            }
            try await group.waitForAll()
        }
        let peer = try PeerReading(harness.stream.taken)
        #expect(peer.violation == nil)
        peer.expectIntact(senders: senders, count: count, padding: 40, noisy: true)
        let largest = harness.stream.largestQueue
        #expect(largest > outbound.high, "the senders never had to wait: \(largest) bytes at most")
        #expect(largest <= outbound.high + senders * largestFrame)
    }

    /// A task cancelled while its frame is partly written (the kernel took the first 100 bytes) does not take the
    /// rest back: the frame is queued whole, its `send` still returns once it is in the kernel, and the messages
    /// after it inflate intact.
    @Test func aSenderCancelledMidwayLeavesItsFrameWholeOnTheWire() async throws {
        let harness = try await DriverHarness.make()
        defer { harness.loop.shutdown() }
        harness.stream.kernelTakes(100)
        let large = Feed.message(sender: 0, sequence: 0, padding: 2_000)
        let sending = harness.send(large)
        guard case .started(let write) = sending else {
            Issue.record("refused: \(sending)")
            return
        }
        let task = Task { try await write.finish() }
        task.cancel()
        #expect(harness.stream.queuedWriteBytes > 0)
        harness.stream.kernelTakes(.max)
        try await task.value
        let after = Feed.message(sender: 0, sequence: 1, padding: 2_000)
        guard case .started(let next) = harness.send(after) else {
            Issue.record("the message after the cancelled one was refused")
            return
        }
        try await next.finish()
        let peer = try PeerReading(harness.stream.taken)
        #expect(peer.violation == nil)
        #expect(peer.texts == [large, after])
    }

    /// Four senders keep sending while the loop closes: our close frame is the last frame on the wire, no write is
    /// even attempted after it, every send that started is before it (intact, in order) and every later one is
    /// refused as not open.
    @Test func nothingFollowsOurCloseFrameWhateverTheSendersDo() async throws {
        let harness = try await DriverHarness.make()
        defer { harness.loop.shutdown() }
        let senders = 4
        let sentBeforeClose = SentCount()
        let started = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for sender in 0..<senders {
                group.addTask {
                    var sequence = 0
                    while true {
                        let sending = harness.send(Feed.message(sender: sender, sequence: sequence))
                        switch sending {
                        case .started(let write):
                            try await write.finish()
                            sequence += 1
                            // The loop closes once 200 messages are out, while the senders go on.
                            guard sentBeforeClose.increment() == 200 else { continue }
                            harness.loop.execute { #expect(harness.driver.close(code: 1000, reason: "bye")) }
                        case .notOpen:
                            return (sender, sequence)
                        case .waitForRoom:
                            Issue.record("the kernel takes everything: no wait for room")
                            return (sender, sequence)
                        }
                    }
                }
            }
            var started: [Int: Int] = [:]
            for try await (sender, count) in group { started[sender] = count }
            return started
        }
        let frames = try WireFrames(harness.stream.taken)
        #expect(frames.opcodes.last == .close)
        #expect(frames.opcodes.filter { $0 == .close }.count == 1)
        #expect(frames.trailingBytes == 0)
        #expect(harness.stream.refusedWrites == 0)
        #expect(harness.stream.wasSealed)
        let peer = try PeerReading(harness.stream.taken)
        #expect(peer.closure == .byPeer(code: 1000, reason: "bye"))
        for sender in 0..<senders {
            let sequences = peer.sequences(of: sender)
            #expect(sequences == Array(0..<(started[sender] ?? -1)), "sender \(sender)")
        }
    }

    /// The stream is reset while a sender waits for room and another's frame waits in the queue: the waiting
    /// write fails, the sender waiting for room is released and refused as not open, and the owner hears the end.
    @Test func aResetReleasesTheSendersAndTheirLaterSendsAreRefused() async throws {
        let outbound = Watermarks(high: 16, low: 4)
        let harness = try await DriverHarness.make(outbound: outbound)
        defer { harness.loop.shutdown() }
        harness.stream.kernelTakes(0)
        let message = Feed.message(sender: 0, sequence: 0, padding: 200)
        guard case .started(let queued) = harness.send(message) else {
            Issue.record("the first message was refused")
            return
        }
        guard case .waitForRoom(let low) = harness.send(message) else {
            Issue.record("over the high watermark, the second message was not told to wait")
            return
        }
        async let released: Void = harness.driver.waitForRoom(atMost: low)
        try await harness.loop.submit {
            harness.driver.reset()
            harness.driver.streamEnded()  // as the stream reports its end after a reset
        }
        await released
        await #expect(throws: SocketError.closed) { try await queued.finish() }
        guard case .notOpen = harness.send(message, checkingRoom: false) else {
            Issue.record("a send after the reset was not refused")
            return
        }
        #expect(harness.stream.wasReset)
        let ending = try await harness.loop.submit { harness.owner.value.ending }
        #expect(ending == .reset)
    }

    /// Runs `body` on a thread of its own (Dispatch's), so that it may block without holding a thread of the
    /// cooperative pool.
    static func onOwnThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "driver-test-sender").async {
                body()
                done.resume()
            }
        }
    }
}

// MARK: - Harness

/// A client-role driver with permessage-deflate (both sides with context takeover) over a scripted stream, on a loop
/// of its own.
struct DriverHarness: Sendable {
    static let compression = WebSocketCompression(parameters: PerMessageDeflateParameters())

    let loop: EventLoop
    let stream: ScriptedByteStream
    let driver: WebSocketDriver
    let owner: LoopBound<DriverOwner>

    static func make(outbound: Watermarks = .standard) async throws -> DriverHarness {
        let loop = try EventLoop(name: "test-driver")
        let stream = ScriptedByteStream(loop: loop)
        let (driver, owner) = try await loop.submit {
            let engine = WebSocketConnection(.init(role: .client, outbound: outbound, compression: Self.compression))
            let owner = DriverOwner()
            let driver = WebSocketDriver(stream: stream, engine: engine, delegate: owner)
            driver.start()
            return (driver, LoopBound(owner, loop: loop))
        }
        return DriverHarness(loop: loop, stream: stream, driver: driver, owner: owner)
    }

    func send(_ text: String, checkingRoom: Bool = true) -> WebSocketDriver.Sending {
        var text = text
        return text.withUTF8 {
            self.driver.send(.text, payload: UnsafeRawBufferPointer($0), checkingRoom: checkingRoom)
        }
    }

    /// Sends as the client's `send` does: waits for room when told to, then sends without checking.
    func sendWaitingForRoom(_ text: String) async throws {
        var checkingRoom = true
        while true {
            switch self.send(text, checkingRoom: checkingRoom) {
            case .started(let write):
                try await write.finish()
                return
            case .waitForRoom(let low):
                await self.driver.waitForRoom(atMost: low)
                checkingRoom = false
            case .notOpen:
                Issue.record("refused as not open")
                return
            }
        }
    }
}

/// How many sends have finished, across the senders.
final class SentCount: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts one more and returns the count.
    func increment() -> Int {
        self.count.add(1, ordering: .relaxed).newValue
    }
}

/// The driver's owner: keeps what it hears (on the loop).
final class DriverOwner: WebSocketDriverDelegate {
    var ending: WebSocketEnding?

    func received(_ message: BorrowedMessage) -> Bool { false }
    func deliverReceived() {}
    func pongReceived(id: UInt64) {}
    func pongSent(payload: [UInt8]) {}
    func closed(_ closure: WebSocketClosure) {}
    func ended(_ ending: WebSocketEnding, failedPings: [UInt64]) { self.ending = ending }
    func flow(_ event: WebSocketFlowEvent) {}
}

/// The messages the senders send: JSON texts alike enough that deflate's context takeover refers back across them.
enum Feed {
    /// - Parameter noisy: each quote carries an id that does not repeat, so that the message compresses to a good
    ///   part of its size.
    static func message(sender: Int, sequence: Int, padding: Int = 4, noisy: Bool = false) -> String {
        let quotes = (0..<padding).map { index in
            let price = #""price":\#(100 + (sequence + index) % 7).25"#
            guard noisy else { return #"{"symbol":"TTHR",\#(price)}"# }
            // A multiplicative hash of the message and the quote: digits that do not repeat.
            let id = UInt64(truncatingIfNeeded: (sender << 40) ^ (sequence << 16) ^ index) &* 0x9E37_79B9_7F4A_7C15
            return #"{"id":"\#(String(id, radix: 16))","symbol":"TTHR",\#(price)}"#
        }
        return #"{"sender":\#(sender),"seq":\#(sequence),"quotes":[\#(quotes.joined(separator: ","))]}"#
    }

    /// The sender and sequence of a message `message(sender:sequence:)` made, nil for anything else.
    static func parse(_ text: String) -> (sender: Int, sequence: Int)? {
        let fields = text.split(separator: ",", maxSplits: 2)
        guard fields.count >= 2, let sender = Int(fields[0].dropFirst(#"{"sender":"#.count)),
              let sequence = Int(fields[1].dropFirst(#""seq":"#.count))
        else { return nil }
        return (sender, sequence)
    }
}

/// What the peer reads from the bytes the stream received: a server-role engine with the same permessage-deflate
/// agreement, which inflates each compressed message against the ones before it.
struct PeerReading {
    var texts: [String] = []
    var pings: [UInt64] = []
    var closure: WebSocketClosure?
    /// The close the peer would send for what it read: a message that did not inflate (1007), or any other violation.
    var violation: ProtocolError?

    init(_ wire: [UInt8]) throws {
        var engine = WebSocketConnection(.init(role: .server, compression: DriverHarness.compression))
        wire.withUnsafeBytes { engine.bytesReceived($0) }
        while engine.nextAction(queuedWriteBytes: 0, { action in
            switch action {
            case .deliver(let message) where message.opcode == .text:
                self.texts.append(String(decoding: message.payload, as: UTF8.self))
            case .deliver(let message) where message.opcode == .ping && message.payload.count == 8:
                self.pings.append(UInt64(bigEndian: message.payload.loadUnaligned(as: UInt64.self)))
            case .closed(.violation(let error, _)):
                self.violation = error
            case .closed(let closure):
                self.closure = closure
            default:
                break
            }
        }) {}
    }

    func sequences(of sender: Int) -> [Int] {
        self.texts.compactMap { Feed.parse($0) }.filter { $0.sender == sender }.map(\.sequence)
    }

    /// Every sender's `count` messages arrived, each exactly as sent and in its sender's order, and nothing else.
    func expectIntact(
        senders: Int, count: Int, padding: Int = 4, noisy: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(self.texts.count == senders * count, sourceLocation: sourceLocation)
        var damaged = 0
        for text in self.texts {
            guard let (sender, sequence) = Feed.parse(text),
                  text == Feed.message(sender: sender, sequence: sequence, padding: padding, noisy: noisy)
            else {
                damaged += 1
                continue
            }
        }
        #expect(damaged == 0, "\(damaged) of \(self.texts.count) messages are not what was sent",
                sourceLocation: sourceLocation)
        for sender in 0..<senders {
            #expect(self.sequences(of: sender) == Array(0..<count), "sender \(sender)", sourceLocation: sourceLocation)
        }
    }
}

/// The frames in what a client wrote, walked by their headers alone (so that bytes after a close frame, which an
/// engine ignores, are seen).
struct WireFrames {
    struct Truncated: Error {}

    var opcodes: [Opcode] = []
    /// Bytes after the last whole frame.
    var trailingBytes = 0

    init(_ wire: [UInt8]) throws {
        var offset = 0
        while offset < wire.count {
            guard wire.count - offset >= 2 else { throw Truncated() }
            let opcode = Opcode(rawValue: wire[offset] & 0x0f)
            var length = Int(wire[offset + 1] & 0x7f)
            var header = 2
            if length == 126 {
                guard wire.count - offset >= 4 else { throw Truncated() }
                length = Int(wire[offset + 2]) << 8 | Int(wire[offset + 3])
                header = 4
            } else if length == 127 {
                guard wire.count - offset >= 10 else { throw Truncated() }
                length = (0..<8).reduce(0) { $0 << 8 | Int(wire[offset + 2 + $1]) }
                header = 10
            }
            if wire[offset + 1] & 0x80 != 0 { header += 4 }  // the masking key
            guard wire.count - offset >= header + length else {
                self.trailingBytes = wire.count - offset
                return
            }
            self.opcodes.append(opcode)
            offset += header + length
        }
    }
}
#endif
