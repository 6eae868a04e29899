#if canImport(Observation)
import Observation

/// A client's connection state for SwiftUI: an `@Observable` object on the main actor whose `state` follows the
/// client's `states` (the latest state, skipping those in between when the main actor is busy).
///
/// ```swift
/// @State private var connection = ObservableConnectionState(client)
/// var body: some View { Text(connection.state.phase.name) }
/// ```
///
/// It holds the client's `states`, not the client: it does not keep the client alive, and once the client is gone
/// `state` keeps the last state it had. Any number of these (and of other observers of `states`) can follow one
/// client at once.
@MainActor
@Observable
public final class ObservableConnectionState {
    /// The client's latest state, updated on the main actor.
    public private(set) var state: ConnectionState

    @ObservationIgnored private var follower: Task<Void, Never>?

    /// Starts following `client`: `state` is the client's current state at once, then each new one.
    public init(_ client: WebSocketClient) {
        let states = client.states
        self.state = client.stateBroadcast.latest
        self.follower = Task { [weak self] in
            for await state in states {
                guard let self else { return }
                self.state = state
            }
        }
    }

    deinit {
        self.follower?.cancel()
    }
}
#endif
