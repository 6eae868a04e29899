import TetherCore
import TetherWire

/// Acknowledged sends and resumable feeds (`WebSocketConfiguration.delivery`, docs/delivery.md): the app's reading
/// of each received message goes to the machine, which decides; the client keeps the payloads and reports.
extension WebSocketClient {
    /// Sends `message` as an acknowledged send with the app's `id`: it goes through the outbox (in order with
    /// `.queued` sends, after the greeting), is kept after its write until a received message acknowledges `id`
    /// (`AcknowledgementOptions.read`), and is written again, after the next greeting and in the order it was
    /// queued, when the connection it went out on ends first. Returns once it is queued; its outcome comes as
    /// `.delivery(.acknowledged)`, `.delivery(.expired)` (after `expiresAfter`; nil: never) or `.delivery(.gaveUp)`
    /// (`AcknowledgementOptions.maximumWrites`, `stop()`, or a message the connection refuses as too large).
    ///
    /// At least once: a message written again may reach the server twice (its first write arrived, its
    /// acknowledgement did not), so the server must answer a repeated id with its acknowledgement and not apply
    /// it again (docs/delivery.md). Ids must be unique among the sends not settled yet; one that waits still is
    /// refused (`.duplicateID`). The sends waiting for their acknowledgement count against `outboxLimits`.
    /// - Throws: `AcknowledgedSendError`: not enabled, a duplicate id, a full outbox, or too large; nothing queued.
    public nonisolated func send(
        _ message: WebSocketMessage, id: String, expiresAfter: Duration? = nil,
        compression: MessageCompression = .automatic
    ) async throws(AcknowledgedSendError) {
        let outgoing = OutgoingMessage(message: message, compression: compression, acknowledged: true)
        try await self.enqueueAcknowledged(outgoing, id: id, expiresAfter: expiresAfter)
    }

    private func enqueueAcknowledged(
        _ message: OutgoingMessage, id: String, expiresAfter: Duration?
    ) throws(AcknowledgedSendError) {
        guard self.configuration.delivery.acknowledgements != nil else { throw .notEnabled }
        let size = message.message.byteCount
        guard size <= self.configuration.maximumMessageSize else {
            throw .messageTooLarge(size: size, limit: self.configuration.maximumMessageSize)
        }
        let decision = self.machine.acknowledgedSendQueued(
            id: id, bytes: size, expiresAfter: expiresAfter.map(\.milliseconds), now: self.now())
        switch decision {
        case .duplicate:
            throw .duplicateID(id)
        case .refused:
            self.afterEvent()  // expired messages may have left
            throw .outboxFull
        case .accepted(let ticket, let action):
            self.payloads.queue(message, ticket: ticket)
            self.handle(action)
        }
    }

    /// What each feed stream delivered last (or was given in `FeedOptions.positions`): what the next greeting asks
    /// the server to resume after, and what an app keeps to start from after a relaunch.
    public var feedPositions: [String: UInt64] { self.machine.feedPositions }

    /// What acknowledged sends and feeds did so far: acknowledgements, writes again, duplicates dropped, gaps.
    public var deliveryCounts: DeliveryCounts { self.machine.deliveryCounts }

    /// The machine's decision on a received message, with the app's reading of it when delivery is on.
    func delivery(of message: WebSocketMessage, generation: Int, now: Int) -> MessageDelivery {
        let delivery = self.configuration.delivery
        guard delivery.isEnabled else {
            return self.machine.messageReceived(generation: generation, bytes: message.byteCount, now: now)
        }
        return self.machine.messageReceived(
            generation: generation, bytes: message.byteCount, labels: delivery.labels(of: message), now: now)
    }

    /// Reports the machine's delivery notices, forgetting the payloads of the sends they settle.
    func publishDeliveryNotices(_ machine: inout SessionMachine) {
        machine.drainDeliveryNotices { notice in
            switch notice {
            case .acknowledged(let ticket, let id, let writes):
                self.payloads.forget(ticket)
                self.publish(.delivery(.acknowledged(id: id, writes: writes)))
            case .expired(let ticket, let id, let writes):
                self.publish(.delivery(.expired(id: id, self.payloads.dropped(ticket), writes: writes)))
            case .gaveUp(let ticket, let id, let writes, let reason):
                self.publish(.delivery(.gaveUp(id: id, self.payloads.dropped(ticket), writes: writes, reason: reason)))
            case .gap(let gap):
                self.publish(.delivery(.gap(gap)))
            }
        }
    }

    /// The greeting of a connection opening now: `configuration.greeting`'s messages, then the feeds' resume
    /// messages for the positions delivered so far. Nil when there is neither.
    var greetingMessages: (@Sendable () async -> [WebSocketMessage])? {
        let greeting = self.configuration.greeting
        guard let resume = self.configuration.delivery.feeds?.resume else { return greeting }
        let positions = self.machine.feedPositions
        return { (await greeting?() ?? []) + resume(positions) }
    }
}
