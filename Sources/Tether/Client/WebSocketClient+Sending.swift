import Foundation
import TetherCore
import TetherWire

/// Sending: straight to the connection when the machine says so, else through the machine's outbox.
extension WebSocketClient {
    /// Sends a message, now or through the outbox.
    ///
    /// Either policy throws `WebSocketSendError.messageTooLarge` at once, whatever the state, for a message over
    /// `maximumMessageSize`.
    ///
    /// `.now` (the default): on the open connection. Throws `WebSocketSendError.notOpen` when no connection is open
    /// (nothing is queued or dropped silently), `.messageTooLarge` when the connection refuses it (a transport whose
    /// own limit is lower), or `.connectionFailed` when the connection broke during the write (it may have arrived).
    /// It never overtakes a queued message: on the wire come the greeting, then every message queued before the
    /// `.now` send, then the `.now` send. With nothing queued (the common case) it does not enter the actor: it
    /// writes to the connection that was current and open when the client last handled an event, so a send is never
    /// queued behind the handling of received messages. While queued messages are being written to the open
    /// connection (the session is open), it waits for them, its turn in the order the `.now` sends came, and returns
    /// once it is written after them; it throws `.notOpen`, nothing of it sent, if that connection ends first or
    /// `stop()` is called. Messages sent from one task keep their order.
    ///
    /// `.queued(expiresAfter:)`: appended to the outbox and returns; throws `.outboxFull` at once when the outbox
    /// is at `outboxLimits`. Queued messages are written in the order they were queued, across any number of
    /// reconnects, on an open connection after its greeting; one that waited longer than `expiresAfter` is reported
    /// as `.outboxDropped(_, reason: .expired)` when it expires (the client's timer wakes for the earliest expiry, up
    /// to `timerTolerance` late) and never sent. `stop()` reports every message still waiting as `.stopped` and
    /// empties the outbox (see `stop()`); so does dropping the client. The guarantee is at most once: a message whose
    /// write was interrupted by a failing connection may or may not have reached the peer, is reported as
    /// `.writeInterrupted` and not sent again; one whose write never started stays first in the outbox. A message
    /// handed to the kernel can still be lost with its connection: confirm at the application level what must
    /// arrive (`.unconfirmed` names what a lost connection may not have delivered; docs/outbox.md says which report
    /// covers which message).
    ///
    /// `compression` applies when the connection negotiated permessage-deflate (`configuration.compression`):
    /// `.automatic` (the default) compresses a message of at least `CompressionOptions.threshold` bytes, `.always`
    /// compresses it whatever its size, `.never` sends it as it is (data already compressed, such as images). A
    /// queued message keeps its choice through the outbox and every reconnect. Without compression negotiated,
    /// every message goes as it is.
    public nonisolated func send(
        _ message: WebSocketMessage, policy: SendPolicy = .now, compression: MessageCompression = .automatic
    ) async throws(WebSocketSendError) {
        // Too large is the answer whatever the policy and the state: an app must not learn it only once open.
        let size = message.byteCount
        guard size <= self.configuration.maximumMessageSize else {
            throw .messageTooLarge(size: size, limit: self.configuration.maximumMessageSize)
        }
        let outgoing = OutgoingMessage(message: message, compression: compression)
        switch policy {
        case .now:
            if let (connection, generation) = self.sendRoute.direct {
                try await Self.write(outgoing, to: connection)  // nothing queued waits: straight to the connection
                // Recorded without entering the actor, and without a suspension unless the connection was reported
                // lost while this was written (then it is reported alone, as `recordWritten` does).
                if self.unconfirmed.written(message, generation: generation) == .afterLoss {
                    await self.publish(
                        .unconfirmed(UnconfirmedMessages(generation: generation, messages: [message], notKept: 0)))
                }
            } else {
                try await self.sendBehindOutbox(outgoing)
            }
        case .queued(let expiresAfter):
            try await self.enqueue(outgoing, expiresAfter: expiresAfter)
        }
    }

    /// Writes `outgoing` to `connection`, with the errors `send` documents. On the caller's executor: a hop here
    /// would cost every send a task switch (docs/benchmarks.md, issue 40).
    private nonisolated(nonsending) static func write(
        _ outgoing: OutgoingMessage, to connection: any TransportConnection
    ) async throws(WebSocketSendError) {
        do {
            try await connection.send(outgoing.message, compression: outgoing.compression)
        } catch let error as WebSocketSendError {
            throw error
        } catch {
            throw .connectionFailed  // a transport that throws something else: the write broke
        }
    }

    /// A `.now` send that found no direct route: the machine refuses it, sends it, or parks it behind the outbox
    /// until its turn (`.writeParkedSend`) or its refusal (`.parkedSendsRefused`). The machine's decision and the
    /// parked send's place in `parkedSends` are taken together, inside the continuation's body (which runs
    /// without a suspension point): no write the machine orders can find the machine's parked send missing here.
    private func sendBehindOutbox(_ message: OutgoingMessage) async throws(WebSocketSendError) {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<SendTurn, Never>) in
            switch self.machine.nowSendArrived(now: self.now()) {
            case .refused:
                continuation.resume(returning: .refused)
            case .direct(let generation):
                continuation.resume(returning: .direct(generation: generation))
            case .parked(let count):
                self.payloads.park(ParkedSend(message: message, continuation: continuation))
                self.sendsWaitingSink.yield(count)
            }
        }
        switch turn {
        case .refused:
            throw .notOpen
        case .direct(let generation):
            guard let connection = self.connections[generation] else { throw .notOpen }
            try await Self.write(message, to: connection)
            self.recordWritten(message.message, generation: generation)
        case .written(let result):
            try result.get()
        }
    }

    private func enqueue(_ message: OutgoingMessage, expiresAfter: Duration?) throws(WebSocketSendError) {
        let size = message.message.byteCount
        let decision = self.machine.messageQueued(
            bytes: size, expiresAfter: expiresAfter.map(\.milliseconds), now: self.now())
        switch decision {
        case .refused:
            self.afterEvent()  // expired messages may have left
            throw .outboxFull
        case .accepted(let ticket, let action):
            self.payloads.queue(message, ticket: ticket)
            self.handle(action)
        }
    }

    /// Writes `message` to the connection of `generation` (none: it closed before the write began) in a task, then
    /// hands the failure, if any, to `written` and reports the outcome to the machine. The task holds the client
    /// only once the write is over: a write waiting for room on a slow socket never keeps a dropped client alive.
    func write(
        _ message: OutgoingMessage, generation: Int,
        then written: @escaping @Sendable (isolated WebSocketClient, WebSocketSendError?) -> Void
    ) {
        let connection = self.connections[generation]
        self.writer = Task { [weak self] in
            var failure: WebSocketSendError? = .notOpen
            if let connection {
                do throws(WebSocketSendError) {
                    try await Self.write(message, to: connection)
                    failure = nil
                } catch {
                    failure = error
                }
            }
            await self?.writeFinished(message, generation: generation, failure: failure, written)
        }
    }

    /// A write to `generation`'s connection completed: recorded until a pong proves it delivered. A write that
    /// completed after its connection was reported lost (a race with the verdict) is reported alone, at once.
    func recordWritten(_ message: WebSocketMessage, generation: Int) {
        guard self.unconfirmed.written(message, generation: generation) == .afterLoss else { return }
        self.publish(.unconfirmed(UnconfirmedMessages(generation: generation, messages: [message], notKept: 0)))
    }

    /// The write of `message` to `generation`'s connection is over: a written message is recorded (until a pong
    /// proves it delivered; an acknowledged send waits for its acknowledgement instead), then `written` hears the
    /// failure, if any, and the machine the outcome.
    private func writeFinished(
        _ message: OutgoingMessage, generation: Int, failure: WebSocketSendError?,
        _ written: @Sendable (isolated WebSocketClient, WebSocketSendError?) -> Void
    ) {
        if failure == nil, !message.acknowledged {
            self.recordWritten(message.message, generation: generation)
        }
        written(self, failure)
        self.writer = nil
        self.handle(self.machine.writeFinished(generation: generation, result: WriteResult(failure), now: self.now()))
    }

    /// Sends the greeting on `connection` in a task, then tells the machine, which reports the session open. The
    /// task holds the client only once the greeting is over: a greeting that takes its time (fetching a token) never
    /// keeps a dropped client alive. Cancelled by `stop()` (the connection is closing: nothing is left to greet).
    func greet(
        _ connection: any TransportConnection, generation: Int,
        greeting: @escaping @Sendable () async -> [WebSocketMessage]
    ) {
        self.greeters[generation] = Task { [weak self] in
            var sent: Bool? = true
            for message in await greeting() {
                guard !Task.isCancelled else {
                    sent = nil
                    break
                }
                do {
                    try await connection.send(message)
                } catch {
                    sent = false
                    break
                }
            }
            await self?.greetingFinished(generation: generation, sent: sent)
        }
    }

    /// The greeting of `generation` went out (`sent`), failed, or was cancelled (nil).
    private func greetingFinished(generation: Int, sent: Bool?) {
        self.greeters[generation] = nil
        switch sent {
        case true?: self.handle(self.machine.greetingSent(generation: generation, now: self.now()))
        case false?: self.handle(self.machine.greetingFailed(generation: generation, now: self.now()))
        case nil: break  // stopped
        }
    }

    /// Sends a text message. See `send(_:)`.
    public nonisolated func send(text: String) async throws(WebSocketSendError) {
        try await self.send(.text(text))
    }

    /// Sends a binary message. See `send(_:)`.
    public nonisolated func send(data: Data) async throws(WebSocketSendError) {
        try await self.send(.binary(data))
    }
}

extension WebSocketMessage {
    /// The payload size in bytes (UTF-8 for text).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
