// libFuzzer entry point for the handshake parsers (server request parser, client response parser) and Base64.
// Compiled together with Sources/TetherWire (one module, hence no import); see scripts/fuzz.sh.
//
// Input: byte 0 selects the parser (bit 0) and a small header limit (bit 1), byte 1 the split position, the rest
// is the bytes from the peer. Checks, besides "no crash, no hang":
// - feeding the bytes in two pieces gives the same result as at once;
// - an accepted request, answered by ServerHandshake.accept, validates on the client side;
// - a rejection's Retry-After turns into a wait that is never negative, whatever the caller's clock says;
// - Base64 decode then encode is the identity on what decodes.

enum HandshakeFuzzOutcome: Equatable {
    case needMore
    case failed(HandshakeError)
    case request(method: String, target: String, key: String, subprotocols: [String], remaining: [UInt8])
    case response(HandshakeResponse)
}

let fuzzHandshake = try! ClientHandshake(
    host: "fuzz.example", port: 8080, secure: false, target: "/", subprotocols: ["chat", "v2"],
    headers: [(name: "Sec-WebSocket-Extensions", value: "permessage-deflate")], key: Array(0..<16))

func parseForFuzzing(_ bytes: ArraySlice<UInt8>, flags: UInt8, split: Int) -> HandshakeFuzzOutcome {
    let limit = flags & 2 != 0 ? 64 : 16 << 10
    let cut = bytes.startIndex + min(split, bytes.count)
    do {
        if flags & 1 == 0 {
            var parser = HandshakeRequestParser(maximumHeaderSize: limit)
            parser.append(bytes[..<cut])
            if split < bytes.count { _ = try parser.parse() }
            parser.append(bytes[cut...])
            guard let request = try parser.parse() else { return .needMore }
            return .request(method: request.method, target: request.target, key: request.key,
                            subprotocols: request.subprotocols, remaining: request.remaining)
        } else {
            var parser = HandshakeResponseParser(handshake: fuzzHandshake, maximumHeaderSize: limit)
            parser.append(bytes[..<cut])
            if split < bytes.count { _ = try parser.parse() }
            parser.append(bytes[cut...])
            guard let response = try parser.parse() else { return .needMore }
            return .response(response)
        }
    } catch {
        return .failed(error)
    }
}

public func handshakeFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let flags = input[0]
    let bytes = input[2...]
    let atOnce = parseForFuzzing(bytes, flags: flags, split: bytes.count)
    let inPieces = parseForFuzzing(bytes, flags: flags, split: Int(input[1]))
    precondition(atOnce == inPieces, "split handshake parsed differently")

    if case .request(_, _, let key, let subprotocols, _) = atOnce {
        // The request parser accepted the key, so it is 16 bytes of base64: a client with that key must accept
        // the server's answer.
        let keyBytes = Base64.decode(key)!
        precondition(keyBytes.count == 16, "accepted key is not 16 bytes")
        let offered = Array(Set(subprotocols)).sorted()
        let client = try! ClientHandshake(host: "h", port: nil, secure: false, target: "/", subprotocols: offered,
                                          key: keyBytes)
        var parser = HandshakeResponseParser(handshake: client)
        var request = HandshakeRequestParser()
        request.append(bytes)
        parser.append(ServerHandshake.accept(try! request.parse()!, subprotocol: offered.first))
        let response = try! parser.parse()!
        precondition(response.subprotocol == offered.first, "subprotocol lost")
    }

    if case .failed(.rejected(_, let retryAfter?)) = atOnce {
        for now in [0, 784_111_777, 1_749_988_800, -1, Int.min, Int.max] {
            precondition(retryAfter.delaySeconds(now: now) >= 0, "negative Retry-After wait")
            precondition(retryAfter.delayMilliseconds(now: now) >= 0, "negative Retry-After wait in ms")
        }
    }

    let text = String(decoding: bytes, as: UTF8.self)
    if let decoded = Base64.decode(text) {
        precondition(Base64.encode(decoded) == text, "base64 is not canonical")
    }
    _ = SHA1.hash(bytes)
    return 0
}
