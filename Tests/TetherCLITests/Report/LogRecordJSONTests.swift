import Foundation
import Testing
import TetherCore
@testable import TetherCLI

@Suite struct LogRecordJSONTests {
    @Test func aCloseRecordHasItsKeysInOrder() {
        let record = LogRecord(
            generation: 3, time: 1250, from: .open, to: .waiting, event: .closed(reason: .pongTimeout, code: 1001))
        #expect(record.jsonLine
            == #"{"t":1250,"gen":3,"event":"closed","from":"open","to":"waiting","#
                + #""reason":"pong_timeout","code":1001}"#)
    }

    @Test func anAttemptsTimingsComeLastWithEachStepWhereItWasTaken() {
        let timings = AttemptTimings(
            resolve: .init(start: 0, duration: 2),
            tcp: [.init(address: "[::1]:80", start: 2, duration: 0, outcome: .failed(.refused)),
                  .init(address: "127.0.0.1:80", start: 2, duration: 1, outcome: .connected)],
            tls: .init(start: 3, duration: 9), tlsHandshake: .resumed, upgrade: .init(start: 12, duration: 30, finished: false))
        let record = LogRecord(
            generation: 1, time: 50, from: .connecting, to: .waiting, event: .closed(reason: .connectTimeout, code: 1001),
            timings: timings)
        #expect(record.jsonLine
            == #"{"t":50,"gen":1,"event":"closed","from":"connecting","to":"waiting","#
                + #""reason":"connect_timeout","code":1001,"timings":{"resolve":{"start_ms":0,"duration_ms":2},"#
                + #""tcp":[{"address":"[::1]:80","family":"ipv6","start_ms":2,"duration_ms":0,"outcome":"refused"},"#
                + #"{"address":"127.0.0.1:80","family":"ipv4","start_ms":2,"duration_ms":1,"outcome":"connected"}],"#
                + #""tls":{"start_ms":3,"duration_ms":9,"handshake":"resumed"},"#
                + #""upgrade":{"start_ms":12,"duration_ms":30,"finished":false}}}"#)
    }

    @Test func anInvalidHandshakeCloseSaysWhatFailedUnderDetail() {
        let record = LogRecord(
            generation: 2, time: 90, from: .connecting, to: .waiting, event: .closed(reason: .handshakeInvalid(detail: "extension not offered"), code: nil)
        )
        #expect(record.jsonLine
            == #"{"t":90,"gen":2,"event":"closed","from":"connecting","to":"waiting","#
                + #""reason":"handshake_invalid","detail":"extension not offered"}"#)
    }

    @Test func eachEventCarriesItsOwnFieldsUnderTheirDocumentedKeys() {
        func line(_ event: LogRecord.Event) -> String {
            LogRecord(generation: 1, time: 7, from: .waiting, to: .waiting, event: event).jsonLine
        }
        let head = #"{"t":7,"gen":1,"event":"#
        let phases = #","from":"waiting","to":"waiting""#
        #expect(line(.retryScheduled(attempt: 2, delay: 5000))
            == head + #""retry_scheduled""# + phases + #","attempt":2,"delay_ms":5000}"#)
        #expect(line(.connecting(attempt: 3)) == head + #""connecting""# + phases + #","attempt":3}"#)
        #expect(line(.pong(rtt: 12)) == head + #""pong""# + phases + #","rtt_ms":12}"#)
        #expect(line(.message(bytes: 64)) == head + #""message""# + phases + #","bytes":64}"#)
        #expect(line(.path(.needsConnection)) == head + #""path""# + phases + #","path":"needsConnection"}"#)
        #expect(line(.closed(reason: .peerClosed(code: 1013), code: 1013))
            == head + #""closed""# + phases + #","reason":"peer_closed","code":1013}"#)
        #expect(line(.gaveUp(reason: .pongTimeout, attempt: 4))
            == head + #""gave_up""# + phases + #","reason":"pong_timeout","attempt":4}"#)
        #expect(line(.stale(ignored: .pingFailed)) == head + #""stale""# + phases + #","ignored":"ping_failed"}"#)
    }

    @Test func everyEventKindAndPhaseHasItsName() throws {
        let events: [LogRecord.Event] = [
            .connecting(attempt: 0), .opened, .ping, .pong(rtt: 1), .message(bytes: 1), .closed(reason: .pongTimeout, code: nil),
            .retryScheduled(attempt: 1, delay: 1), .path(.available), .background, .foreground, .stopped, .greeting,
            .reconnectRequested, .gaveUp(reason: .pongTimeout, attempt: 1), .readingHeld, .readingResumed,
            .stale(ignored: .pong),
        ]
        let phases: [SessionPhase] = [.stopped, .connecting, .open, .waiting, .offline, .suspended, .failed]
        var names: [String] = []
        for (index, event) in events.enumerated() {
            let phase = phases[index % phases.count]
            let line = LogRecord(generation: 0, time: 0, from: phase, to: phase, event: event).jsonLine
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys).isSuperset(of: ["t", "gen", "event", "from", "to"]))
            #expect(object["from"] as? String == phase.name)
            names.append(try #require(object["event"] as? String))
        }
        #expect(names == [
            "connecting", "opened", "ping", "pong", "message", "closed", "retry_scheduled", "path", "background",
            "foreground", "stopped", "greeting", "reconnect_requested", "gave_up", "reading_held", "reading_resumed",
            "stale",
        ])
        #expect(phases.map(\.name) == ["stopped", "connecting", "open", "waiting", "offline", "suspended", "failed"])
    }

    @Test func aMessageRecordHoldsItsSizeNotItsPayload() throws {
        let line = LogRecord(generation: 2, time: 40, from: .open, to: .open, event: .message(bytes: 11)).jsonLine
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
