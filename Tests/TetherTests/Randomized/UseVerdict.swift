import Foundation
import Tether
import TetherCore

/// What a round must show, from the user's side: every send the client accepted arrives at the server exactly as it
/// was sent, at most once, in its task's order, or is reported; nothing that was refused arrives.
///
/// Which report covers which case (docs/outbox.md "Which report covers which message"):
/// - A send that throws was not accepted. `.messageTooLarge` (a message over `maximumMessageSize`, whatever the
///   policy and the state: the only error for one), `.notOpen` and `.outboxFull` say that nothing of it was sent: it
///   never arrives. `.connectionFailed` (`.now` only) says that the write broke: it may have arrived. A thrown send is
///   never reported again (`.outboxDropped`, `.unconfirmed`).
/// - A `.now` send that returned was written to a connection: it arrives, or that connection was lost before a pong
///   proved it received and `.unconfirmed` names it (it may have arrived then). A connection the client closed on
///   purpose reports nothing: its closing handshake went through, so what was written arrived.
/// - A `.queued` send that returned arrives; or `.unconfirmed` names it (written, then lost as above); or
///   `.outboxDropped` names it once: `.expired`, `.stopped` or `.tooLarge` (never written: it never arrives), or
///   `.writeInterrupted` (the write broke: it may have arrived).
/// - On every connection the greeting comes first; a message the server received is exactly a message the plan sent
///   (or the greeting); each task's messages arrive in its order across the connections, in the order the server
///   accepted them (the client's generations); what the server echoes comes back exactly, at most once, in order.
struct UseVerdict {
    let plan: UsePlan

    private var payloads: UsePayloads { self.plan.payloads }

    /// Where a message was seen: connection (or generation) and position.
    private struct Place: Comparable {
        var connection: Int
        var position: Int

        static func < (left: Place, right: Place) -> Bool {
            (left.connection, left.position) < (right.connection, right.position)
        }
    }

    /// A summary of the round and the broken promises, each with what was seen (empty: none).
    func judge(
        outcomes: [Int: Result<Void, WebSocketSendError>], events: [WebSocketEvent], arrivals: [[WebSocketMessage]]
    ) -> (summary: String, failures: [String]) {
        var failures: [String] = []
        func fail(_ text: String) {
            if failures.count < 40 { failures.append(text) }
        }
        func describe(_ id: Int) -> String {
            let send = self.plan.messages[id]
            let kind = if case .text = send.message { "text" } else { "binary" }
            return "send \(id) (task \(send.task) #\(send.sequence), \(kind) \(send.message.byteCount) B, "
                + "\(send.policy), \(send.compression))"
        }

        // What the server received.
        var arrived: [Int: [Place]] = [:]
        for (connection, messages) in arrivals.enumerated() {
            var greeted = false
            for (position, message) in messages.enumerated() {
                if message == UsePlan.greeting {
                    greeted = true
                    continue
                }
                guard let id = self.payloads.id(of: message) else {
                    fail("connection \(connection + 1) received a message no send was, at \(position): "
                        + "\(Self.glimpse(message))")
                    continue
                }
                if self.plan.greets && !greeted {
                    fail("connection \(connection + 1) received \(describe(id)) before its greeting")
                }
                arrived[id, default: []].append(Place(connection: connection, position: position))
            }
        }

        // What the client reported, and what came back.
        var unconfirmed: [Int: Int] = [:]
        var dropped: [Int: [OutboxDropReason]] = [:]
        var echoed: [Int: [Place]] = [:]
        for (position, event) in events.enumerated() {
            switch event {
            case .unconfirmed(let report):
                if report.notKept > 0 { fail("an unconfirmed report did not keep \(report.notKept) messages") }
                for message in report.messages {
                    guard let id = self.payloads.id(of: message) else {
                        fail("an unconfirmed report names a message no send was: \(Self.glimpse(message))")
                        continue
                    }
                    unconfirmed[id, default: 0] += 1
                }
            case .outboxDropped(let message, let reason):
                guard let id = self.payloads.id(of: message) else {
                    fail("a drop report names a message no send was: \(Self.glimpse(message))")
                    continue
                }
                dropped[id, default: []].append(reason)
            case .message(let message, let generation):
                if message == UsePlan.greeting { continue }
                guard let id = self.payloads.id(of: message) else {
                    fail("generation \(generation) delivered a message no send was: \(Self.glimpse(message))")
                    continue
                }
                echoed[id, default: []].append(Place(connection: generation, position: position))
            default:
                break
            }
        }

        var counts: [String: Int] = [:]
        for send in self.plan.messages {
            let id = send.id
            let arrivedHere = arrived[id] ?? []
            let unconfirmedHere = unconfirmed[id] ?? 0
            let droppedHere = dropped[id] ?? []
            let overLimit = send.message.byteCount > self.plan.maximumMessageSize
            if arrivedHere.count > 1 { fail("\(describe(id)) arrived \(arrivedHere.count) times") }
            if (echoed[id]?.count ?? 0) > 1 { fail("\(describe(id)) came back \(echoed[id]!.count) times") }
            if echoed[id] != nil && arrivedHere.isEmpty { fail("\(describe(id)) came back but never arrived") }
            if unconfirmedHere > 1 { fail("\(describe(id)) was reported unconfirmed \(unconfirmedHere) times") }
            guard let outcome = outcomes[id] else {
                fail("\(describe(id)) never returned")
                continue
            }
            switch outcome {
            case .failure(let error):
                counts["threw \(Self.name(error))", default: 0] += 1
                let tooLarge = WebSocketSendError.messageTooLarge(
                    size: send.message.byteCount, limit: self.plan.maximumMessageSize)
                if overLimit, error != tooLarge {
                    fail("\(describe(id)) is over the limit and threw \(error)")
                }
                if !overLimit, case .messageTooLarge = error { fail("\(describe(id)) threw \(error)") }
                switch (send.policy, error) {
                case (.now, .notOpen), (.now, .messageTooLarge), (.queued, .outboxFull), (.queued, .messageTooLarge):
                    if !arrivedHere.isEmpty { fail("\(describe(id)) threw \(error), and arrived") }
                case (.now, .connectionFailed):
                    break  // the write broke: it may have arrived
                default:
                    fail("\(describe(id)) threw \(error)")
                }
                if unconfirmedHere > 0 || !droppedHere.isEmpty {
                    fail("\(describe(id)) threw \(error), and was reported (\(droppedHere), unconfirmed)")
                }
            case .success:
                if overLimit { fail("\(describe(id)) is over the limit, and was accepted") }
                if droppedHere.count > 1 { fail("\(describe(id)) was reported dropped \(droppedHere)") }
                if case .now = send.policy, !droppedHere.isEmpty {
                    fail("\(describe(id)) was sent now, and reported dropped from the outbox \(droppedHere)")
                }
                if let reason = droppedHere.first {
                    counts["dropped \(reason)", default: 0] += 1
                    if reason != .writeInterrupted && !arrivedHere.isEmpty {
                        fail("\(describe(id)) was dropped as \(reason) (never written), and arrived")
                    }
                    if unconfirmedHere > 0 { fail("\(describe(id)) was dropped as \(reason), and unconfirmed") }
                } else if arrivedHere.isEmpty && unconfirmedHere == 0 {
                    fail("\(describe(id)) was accepted, never arrived, and was not reported")
                }
                if !arrivedHere.isEmpty { counts["arrived", default: 0] += 1 }
                if unconfirmedHere > 0 { counts["unconfirmed", default: 0] += 1 }
            }
        }

        // Each task's order, at the server and back.
        for sends in self.plan.tasks {
            for (what, places) in [("arrived", arrived), ("came back", echoed)] {
                var last: (place: Place, id: Int)?
                for send in sends {
                    guard let place = places[send.id]?.first else { continue }
                    if let last, place < last.place {
                        fail("\(describe(send.id)) \(what) before \(describe(last.id)), which was sent first")
                    }
                    last = (place, send.id)
                }
            }
        }

        counts["echoes", default: 0] = echoed.count
        let summary = "\(self.plan.messages.count) sends over \(arrivals.count) connections: "
            + counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return (summary, failures)
    }

    private static func name(_ error: WebSocketSendError) -> String {
        switch error {
        case .notOpen: "notOpen"
        case .messageTooLarge: "messageTooLarge"
        case .connectionFailed: "connectionFailed"
        case .outboxFull: "outboxFull"
        }
    }

    /// A message's kind, size and first bytes, for a failure's text.
    static func glimpse(_ message: WebSocketMessage) -> String {
        switch message {
        case .text(let text): "text \(text.utf8.count) B \(String(reflecting: String(text.prefix(24))))"
        case .binary(let data): "binary \(data.count) B \(data.prefix(12).map { String($0, radix: 16) })"
        }
    }
}
