import Foundation
import TetherCore

/// A request provider (`WebSocketConfiguration.requestProvider`): each attempt's URL and headers, made before the
/// attempt's connection.
///
/// The provider runs in a task that holds the client weakly (it enters the client only to hand the request over), so
/// a provider that takes its time never keeps a dropped client alive. The attempt is the machine's from its
/// `.openTransport` on: its connect deadline covers the provider, and a close of the attempt (the deadline, `stop()`,
/// the background) cancels the provider's task and ends the attempt at once, as a transport ends a connection it
/// closed — whether or not the provider heeds the cancellation.
extension WebSocketClient {
    /// Asks `provider` for the request of generation `generation`'s attempt, then connects with it.
    func askForRequest(generation: Int, provider: @escaping ConnectionRequest.Provider) {
        let context = ConnectionRequest.Context(
            generation: generation, attempts: self.machine.attempts, previousEnd: self.machine.lastEnd)
        self.requesters[generation] = Task { [weak self] in
            let made: Result<ConnectionRequest, any Error>
            do {
                made = .success(try await provider(context))
            } catch {
                made = .failure(error)
            }
            await self?.requestMade(made, generation: generation)
        }
    }

    /// The provider made generation `generation`'s request, or failed. Ignored when the attempt was closed meanwhile
    /// (`abandonRequest`). A request the handshake cannot carry, or a failure, ends the attempt as `request_failed`
    /// (its detail names the header or the error's type, never a value); otherwise the connection is made with it.
    private func requestMade(_ made: Result<ConnectionRequest, any Error>, generation: Int) {
        guard self.requesters.removeValue(forKey: generation) != nil else { return }  // closed while being made
        let provided: ConnectionRequest
        switch made {
        case .success(let request):
            provided = request
        case .failure(let error):
            return self.requestFailed(generation: generation, detail: "the provider threw \(type(of: error))")
        }
        if let problem = self.configuration.problem(with: provided.headers) {
            return self.requestFailed(
                generation: generation, detail: "headers: \(problem.value) (they must be \(problem.requirement))")
        }
        var request = self.request
        request.url = provided.url
        request.headers = provided.headers
        let connection = self.connect(generation: generation, request: request)
        self.connections.add(connection, generation: generation)
        if self.machine.readingHeld { connection.holdReading(true) }  // the consumer fell behind meanwhile
    }

    /// Generation `generation`'s attempt ends without a connection, as `.requestFailed(detail:)`.
    private func requestFailed(generation: Int, detail: String) {
        self.transportEvent(.ended(.requestFailed(detail: detail)), generation: generation)
        self.readerFinished(generation)
    }

    /// The machine closed generation `generation`'s attempt while its request was being made: the provider's task
    /// is cancelled, and the attempt ends now (in a turn of its own, as a transport reports the end of a connection
    /// the client closed), whatever the provider does with the cancellation.
    func abandonRequest(generation: Int) {
        guard let requester = self.requesters.removeValue(forKey: generation) else { return }
        requester.cancel()
        Task { [weak self] in
            guard let self else { return }
            await self.attemptAbandoned(generation: generation)
        }
    }

    private func attemptAbandoned(generation: Int) {
        self.transportEvent(.ended(.closedLocally), generation: generation)
        self.readerFinished(generation)
    }
}
