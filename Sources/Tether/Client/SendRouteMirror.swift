import Synchronization
import TetherCore

/// Where `send(_:policy: .now)` goes, as the machine last decided it (`SessionMachine.sendRoute`), kept outside the
/// actor so that sending never waits for the actor, which may be busy with received messages.
final class SendRouteMirror: Sendable {
    private let route = Mutex(Route.closed)

    /// The connection a `.now` send writes to without entering the actor, with its generation: the open one, when
    /// nothing is queued.
    var direct: (connection: any TransportConnection, generation: Int)? {
        self.route.withLock { route in
            if case .direct(let connection, let generation) = route { (connection, generation) } else { nil }
        }
    }

    /// Mirrors `decided`, naming `connection` for a direct route (nil: it is not live, the route is closed). The
    /// client calls it only when the route or its connection changed (it compares on its actor, without the lock).
    func publish(_ decided: SendRoute, connection: (any TransportConnection)?) {
        let route: Route =
            switch decided {
            case .closed: .closed
            case .direct(let generation): connection.map { .direct($0, generation: generation) } ?? .closed
            case .behindOutbox: .behindOutbox
            }
        self.route.withLock { $0 = route }
    }

    private enum Route {
        /// No open session: `.now` throws `notOpen`.
        case closed
        /// Open with nothing queued: `.now` writes directly, without entering the actor.
        case direct(any TransportConnection, generation: Int)
        /// Queued messages go first: `.now` enters the actor, whose machine parks it.
        case behindOutbox
    }
}
