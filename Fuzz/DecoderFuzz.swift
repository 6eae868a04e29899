// libFuzzer entry point for the frame parser + message assembler (WebSocketDecoder), both roles.
// Compiled together with Sources/TetherWire (one module, hence no import); see scripts/fuzz.sh.
//
// Input: byte 0 selects the configuration (bit 0: role, bits 1-2: allowed RSV bits, bit 3: small limits, bit 4:
// binary messages of 8 bytes or more received into storage of their own, as large ones are),
// byte 1 seeds the read sizes, the rest is the byte stream. Checks, besides "no crash, no hang":
// - feeding the stream in pieces gives exactly the messages and the error of feeding it at once;
// - every text message delivered without a reserved bit is valid UTF-8, and the validator agrees with the standard library on the input;
// - every message decoded re-encodes (other role) and decodes back to itself.

struct FuzzOutcome: Equatable {
    var messages: [WireMessage] = []
    var error: ProtocolError?
}

func decodeForFuzzing(_ stream: ArraySlice<UInt8>, flags: UInt8, readSizes: UInt8) -> FuzzOutcome {
    let role: Role = flags & 1 == 0 ? .client : .server
    let reservedBits: UInt8 = [0, 0b100, 0b010, 0b111][Int(flags >> 1 & 3)]
    let small = flags & 8 != 0
    var decoder = WebSocketDecoder(
        role: role, maximumFrameSize: small ? 200 : 1 << 20, maximumMessageSize: small ? 300 : 1 << 20,
        reservedBitsAllowed: reservedBits, dedicatedPayloadThreshold: flags & 16 != 0 ? 8 : 16 << 10)
    var outcome = FuzzOutcome()
    var start = stream.startIndex
    var step = Int(readSizes)
    while true {
        let size = readSizes == 0 ? stream.count : 1 + step % 17
        step = step &* 31 &+ 7
        let end = min(stream.endIndex, start + max(size, 1))
        decoder.append(stream[start..<end])
        do {
            while let message = try decoder.nextMessage({ borrowed in
                // Text a reserved bit marks is an extension's (permessage-deflate's compressed text): the decoder
                // lends it as it came, and the engine validates it once inflated. Unmarked text must be valid.
                if borrowed.opcode == .text, borrowed.reservedBits == 0 {
                    precondition(String(validating: borrowed.payload, as: UTF8.self) != nil, "invalid UTF-8 delivered")
                }
                if let storage = borrowed.storage {
                    precondition(
                        borrowed.opcode == .binary && UnsafeRawPointer(storage.bytes.baseAddress) == borrowed.payload.baseAddress
                            && storage.bytes.count == borrowed.payload.count,
                        "a payload in storage of its own is all of it, and only a binary message's")
                }
                return borrowed.message
            }) {
                outcome.messages.append(message)
            }
        } catch {
            outcome.error = error
            return outcome
        }
        start = end
        if start == stream.endIndex { return outcome }
    }
}

public func decoderFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let flags = input[0]
    let stream = input[2...]
    precondition(
        UTF8Validator.isValid(stream) == (String(validating: stream, as: UTF8.self) != nil),
        "UTF-8 validator disagrees with the standard library")
    let atOnce = decodeForFuzzing(stream, flags: flags, readSizes: 0)
    let inPieces = decodeForFuzzing(stream, flags: flags, readSizes: input[1] | 1)
    precondition(atOnce == inPieces, "split input decoded differently")
    if let error = atOnce.error {
        precondition([1002, 1007, 1009].contains(error.closeCode), "unexpected close code")
    }

    // Re-encode what was decoded, from the peer's role, and decode it again.
    let peer: Role = flags & 1 == 0 ? .server : .client
    var encoder = WebSocketEncoder(
        role: peer, fragmentSize: Int(input[1]) + 1, random: FuzzRandom(state: UInt64(size)))
    var wire: [UInt8] = []
    for message in atOnce.messages {
        switch message {
        case .text(let text): encoder.text(text, into: &wire)
        case .binary(let bytes): encoder.binary(bytes, into: &wire)
        case .ping(let bytes): try! encoder.ping(bytes, into: &wire)
        case .pong(let bytes): try! encoder.pong(bytes, into: &wire)
        case .close(let code, let reason): try! encoder.close(code: code, reason: reason, into: &wire)
        }
    }
    var decoder = WebSocketDecoder(role: flags & 1 == 0 ? .client : .server)
    decoder.append(wire)
    var again: [WireMessage] = []
    while let message = try! decoder.next() { again.append(message) }
    precondition(again == atOnce.messages, "re-encoded messages decoded differently")
    return 0
}
