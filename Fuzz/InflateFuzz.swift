// libFuzzer entry point for the engine's inflate path (WebSocketConnection with permessage-deflate negotiated).
// Compiled together with Sources/TetherWire (one module, hence no import); see scripts/fuzz.sh.
//
// Input: byte 0 selects the configuration (bit 0: the engine's role; bits 1-2: the peer's window, 9, 10, 12 or 15
// bits; bit 3: no context takeover on the peer's side; bit 4: a small message limit, 1 KiB instead of 1 MiB; bit 5:
// text instead of binary; bit 6: the payloads are compressed first, so that inflation goes deep and must give
// them back exactly; bit 7: the peer fragments its frames), byte 1 seeds the fragment and read sizes, the rest is
// the messages, each a length byte and that many bytes (the last takes what is left). Each goes to the engine as
// one RSV1 data message from the peer. Checks, besides "no crash, no hang, no sanitizer report":
// - the engine delivers whole messages within the limit, then closes, if it does, with a typed violation: 1007
//   (does not inflate, or text that is not UTF-8), 1009 (over the limit) or 1002; never anything else;
// - text it delivers is valid UTF-8;
// - with bit 6, every message within the limit is delivered exactly as it was before compression.

public func inflateFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let flags = input[0]
    let role: Role = flags & 1 == 0 ? .client : .server
    let peerWindow = [9, 10, 12, 15][Int(flags >> 1 & 3)]
    let peerResets = flags & 8 != 0
    let limit = flags & 16 != 0 ? 1 << 10 : 1 << 20
    let opcode: Opcode = flags & 32 != 0 ? .text : .binary
    let compressFirst = flags & 64 != 0
    let fragmented = flags & 128 != 0

    // The peer's messages.
    var payloads: [[UInt8]] = []
    var index = 2
    while index < input.count {
        let length = Int(input[index])
        let start = index + 1
        let end = index + 1 + length < input.count && payloads.count < 15 ? start + length : input.count
        payloads.append(Array(input[min(start, input.count)..<end]))
        index = end
    }

    // What the peer compresses with is what the engine inflates with.
    let peerSide: (noContextTakeover: Bool, windowBits: Int) = (peerResets, peerWindow)
    let parameters = role == .client
        ? PerMessageDeflateParameters(serverNoContextTakeover: peerSide.noContextTakeover,
                                      serverMaxWindowBits: peerSide.windowBits)
        : PerMessageDeflateParameters(clientNoContextTakeover: peerSide.noContextTakeover,
                                      clientMaxWindowBits: peerSide.windowBits)
    var engine = WebSocketConnection(
        .init(role: role, maximumMessageSize: limit, compression: WebSocketCompression(parameters: parameters)),
        random: FuzzRandom(state: UInt64(size)))
    let compressor = DeflateCompressor(windowBits: peerWindow, noContextTakeover: peerResets)
    var encoder = WebSocketEncoder(
        role: role == .client ? .server : .client, fragmentSize: fragmented ? Int(input[1]) + 1 : .max,
        random: FuzzRandom(state: UInt64(input[1])))
    var wire: [UInt8] = []
    var expected: [(payload: [UInt8], wireSize: Int)] = []
    for payload in payloads {
        var body = payload
        if compressFirst {
            body.removeAll()
            payload.withUnsafeBytes { bytes in
                do throws(CompressionError) { try compressor.compress(bytes, appendingTo: &body) } catch {
                    preconditionFailure("compressing failed: \(error)")
                }
            }
        }
        expected.append((payload, body.count))
        encoder.encode(opcode, payload: body, reservedBits: 0b100, into: &wire)
    }

    // Fed in pieces of 1 to 64 bytes (or at once), each followed by the engine's actions.
    var delivered: [[UInt8]] = []
    var violation: ProtocolError?
    var closedOtherwise = false
    var start = 0
    var step = Int(input[1])
    while start < wire.count, violation == nil, !closedOtherwise {
        let piece = input[1] & 1 == 0 ? wire.count : 1 + Int(step.magnitude % 64)
        step = step &* 31 &+ 7
        let end = min(wire.count, start + piece)
        wire[start..<end].withUnsafeBytes { engine.bytesReceived($0) }
        start = end
        while engine.nextAction(queuedWriteBytes: 0, { action in
            switch action {
            case .deliver(let message):
                delivered.append(Array(message.payload))
                precondition(message.opcode == opcode, "delivered a \(message.opcode) message")
                precondition(message.payload.count <= limit, "delivered past the limit")
                if message.opcode == .text {
                    precondition(String(validating: message.payload, as: UTF8.self) != nil, "invalid UTF-8 delivered")
                }
            case .closed(.violation(let error, _)):
                violation = error
            case .closed:
                closedOtherwise = true
            case .pongReceived, .pongSent, .write, .pauseReading, .resumeReading, .awaitWriteRoom, .armCloseTimer,
                .closeStream, .resetStream, .ended:
                break
            }
        }) || engine.takeOutput({ _, _ in }) {}
    }
    precondition(!closedOtherwise, "closed without a violation: nothing in the input closes")
    if let violation {
        precondition([1002, 1007, 1009].contains(violation.closeCode), "unexpected close code \(violation.closeCode)")
    }
    if compressFirst {
        // Compressed by a real deflater: each message within the limit (and valid UTF-8, for text) arrives as it was,
        // in order, until the first that is not.
        // A message is over the limit when it is, inflated or as it came (`maximumMessageSize` bounds both).
        for (position, (payload, wireSize)) in expected.enumerated() {
            let tooBig = payload.count > limit || wireSize > limit
            guard !tooBig, opcode == .binary || String(validating: payload, as: UTF8.self) != nil else {
                precondition(delivered.count == position, "a message after a refused one was delivered")
                precondition(violation?.closeCode == (tooBig ? 1009 : 1007), "wrong close code")
                break
            }
            precondition(
                position < delivered.count && delivered[position] == payload,
                "message \(position) of \(expected.count) inflated differently: \(delivered.count) delivered, "
                    + "\(violation.map { "close \($0.closeCode) \($0)" } ?? "no close")")
        }
    } else {
        precondition(delivered.count <= expected.count, "more messages than were sent")
    }
    engine.streamEnded()
    while engine.nextAction(queuedWriteBytes: 0, { _ in }) {}
    return 0
}
