import TetherCore

/// What the machine's outbox refers to by ticket and by turn, held by the client (the machine holds no payloads):
/// the queued messages (and the one being written), and the `.now` sends parked behind them, in order.
struct OutboxPayloads {
    private var queued: [Int: OutgoingMessage] = [:]
    private var parked: [ParkedSend] = []

    mutating func queue(_ message: OutgoingMessage, ticket: Int) {
        self.queued[ticket] = message
    }

    /// The message the machine orders written.
    func message(_ ticket: Int) -> OutgoingMessage {
        guard let message = self.queued[ticket] else { preconditionFailure("the machine writes only messages it queued") }
        return message
    }

    /// A message was written: it is forgotten, unless it is an acknowledged send (kept until a delivery notice).
    mutating func written(_ ticket: Int) {
        guard self.queued[ticket]?.acknowledged != true else { return }
        self.queued[ticket] = nil
    }

    /// An acknowledged send was acknowledged: forgotten.
    mutating func forget(_ ticket: Int) {
        self.queued[ticket] = nil
    }

    /// The machine dropped the message of `ticket`: returns it, forgotten, to be reported.
    mutating func dropped(_ ticket: Int) -> WebSocketMessage {
        guard let message = self.queued.removeValue(forKey: ticket) else {
            preconditionFailure("the machine drops only messages it queued")
        }
        return message.message
    }

    mutating func park(_ send: ParkedSend) {
        self.parked.append(send)
    }

    /// The first parked send, which the machine orders written now.
    mutating func nextParked() -> ParkedSend? {
        self.parked.isEmpty ? nil : self.parked.removeFirst()
    }

    /// The machine refused the first `count` parked sends: they throw `notOpen` (nothing of them was sent).
    mutating func refuseParked(_ count: Int) {
        let refused = self.parked.prefix(count)
        self.parked.removeFirst(count)
        for send in refused {
            send.continuation.resume(returning: .written(.failure(.notOpen)))  // their connection is not open
        }
    }
}

/// A message on its way: what `send` was given, with its compression choice.
struct OutgoingMessage: Sendable {
    var message: WebSocketMessage
    var compression: MessageCompression
    /// An acknowledged send: kept after its write, and not recorded as unconfirmed (it is written again instead).
    var acknowledged = false
}

/// A `.now` send parked behind the outbox: resumed once written (or with its error), or refused with `notOpen`.
struct ParkedSend {
    var message: OutgoingMessage
    var continuation: CheckedContinuation<SendTurn, Never>
}

/// What the machine made of a `.now` send that found no direct route.
enum SendTurn {
    /// No open session: nothing sent.
    case refused
    /// The outbox was written meanwhile: write it to the connection of `generation`.
    case direct(generation: Int)
    /// Parked, then written (or refused) in its turn.
    case written(Result<Void, WebSocketSendError>)
}

extension WriteResult {
    /// What the connection's answer to a write says happened: a fact for the machine, which decides what it means
    /// (`SessionMachine.writeFinished`). Every error is named, so that a new one must be placed here.
    init(_ failure: WebSocketSendError?) {
        switch failure {
        case nil: self = .written
        case .notOpen?: self = .notOpen
        case .messageTooLarge?: self = .tooLarge
        case .connectionFailed?: self = .interrupted
        case .outboxFull?: self = .interrupted  // not a connection's answer: a transport that throws it broke
        }
    }
}
