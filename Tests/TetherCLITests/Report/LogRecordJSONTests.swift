import Foundation
import Testing
import TetherCore
@testable import TetherCLI

@Suite struct LogRecordJSONTests {
    @Test func aCloseRecordHasItsKeysInOrder() {
        let record = LogRecord(
            generation: 3, kind: .closed, time: 1250, from: .open, to: .waiting,
            reason: .pongTimeout, code: 1001)
        #expect(record.jsonLine
            == #"{"t":1250,"gen":3,"event":"closed","from":"open","to":"waiting","#
                + #""reason":"pong_timeout","code":1001}"#)
    }

    @Test func anInvalidHandshakeCloseSaysWhatFailedUnderDetail() {
        let record = LogRecord(
            generation: 2, kind: .closed, time: 90, from: .connecting, to: .waiting,
            reason: .handshakeInvalid(detail: "extension not offered"))
        #expect(record.jsonLine
            == #"{"t":90,"gen":2,"event":"closed","from":"connecting","to":"waiting","#
                + #""reason":"handshake_invalid","detail":"extension not offered"}"#)
    }

    @Test func everyOptionalFieldHasItsDocumentedKey() {
        let record = LogRecord(
            generation: 1, kind: .retryScheduled, time: 7, from: .waiting, to: .waiting,
            reason: .peerClosed(code: 1013),
            code: 1013, rtt: 12, attempt: 2, delay: 5000, bytes: 64, path: .needsConnection)
        #expect(record.jsonLine == #"{"t":7,"gen":1,"event":"retry_scheduled","from":"waiting","to":"waiting","#
            + #""reason":"peer_closed","code":1013,"rtt_ms":12,"attempt":2,"delay_ms":5000,"bytes":64,"#
            + #""path":"needsConnection"}"#)
    }

    @Test func everyEventKindAndPhaseHasItsName() throws {
        let kinds: [LogRecord.Kind] = [
            .connecting, .opened, .ping, .pong, .message, .closed, .retryScheduled, .path, .background,
            .foreground, .stopped,
        ]
        let phases: [SessionPhase] = [.stopped, .connecting, .open, .waiting, .offline, .suspended, .failed]
        var names: [String] = []
        for (index, kind) in kinds.enumerated() {
            let phase = phases[index % phases.count]
            let line = LogRecord(generation: 0, kind: kind, time: 0, from: phase, to: phase).jsonLine
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["t", "gen", "event", "from", "to"])
            #expect(object["from"] as? String == phase.name)
            names.append(try #require(object["event"] as? String))
        }
        #expect(names == [
            "connecting", "opened", "ping", "pong", "message", "closed", "retry_scheduled", "path", "background",
            "foreground", "stopped",
        ])
        #expect(phases.map(\.name) == ["stopped", "connecting", "open", "waiting", "offline", "suspended", "failed"])
    }

    @Test func aMessageRecordHoldsItsSizeNotItsPayload() throws {
        let line = LogRecord(generation: 2, kind: .message, time: 40, from: .open, to: .open, bytes: 11).jsonLine
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["bytes"] as? Int == 11)
        #expect(Set(object.keys) == ["t", "gen", "event", "from", "to", "bytes"])
    }

    @Test func stringsAreEscaped() {
        let value = JSONValue.object([("a\"b", .string("line\nbreak\t\u{1}\\"))])
        #expect(value.serialized() == #"{"a\"b":"line\nbreak\t\u0001\\"}"#)
    }

    @Test func prettyOutputParsesBackToTheSameValues() throws {
        let value = JSONValue.object([
            ("list", .array([.int(1), .bool(false), .null])), ("empty", .object([])), ("none", .array([])),
        ])
        let parsed = try #require(
            JSONSerialization.jsonObject(with: Data(value.serialized(pretty: true).utf8)) as? [String: Any])
        #expect((parsed["list"] as? [Any])?.count == 3)
        #expect((parsed["empty"] as? [String: Any])?.isEmpty == true)
    }
}
