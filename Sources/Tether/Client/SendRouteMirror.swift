import Synchronization
import TetherCore

/// Where `send(_:policy: .now)` goes, as the machine last decided it (`SessionMachine.sendRoute`), kept outside the
/// actor so that sending never waits for the actor, which may be busy with received messages.
final class SendRouteMirror: Sendable {
    private let route = Mutex(Published(route: .closed, decided: .closed, connection: nil))

    /// The connection a `.now` send writes to without entering the actor: the open one, when nothing is queued.
    var direct: (any TransportConnection)? {
        self.route.withLock { published in
            if case .direct(let connection) = published.route { connection } else { nil }
        }
    }

    /// Mirrors `decided`, naming `connection` for a direct route (nil: it is not live, the route is closed).
    /// Called after every event; cheap when nothing changed.
    func publish(_ decided: SendRoute, connection: (any TransportConnection)?) {
        let identity = connection.map { ObjectIdentifier($0) }
        self.route.withLock { published in
            guard decided != published.decided || identity != published.connection else { return }
            published.decided = decided
            published.connection = identity
            published.route =
                switch decided {
                case .closed: .closed
                case .direct: connection.map { .direct($0) } ?? .closed
                case .behindOutbox: .behindOutbox
                }
        }
    }

    private struct Published {
        var route: Route
        /// What `route` was made from, to publish only changes.
        var decided: SendRoute
        var connection: ObjectIdentifier?
    }

    private enum Route {
        /// No open session: `.now` throws `notOpen`.
        case closed
        /// Open with nothing queued: `.now` writes directly, without entering the actor.
        case direct(any TransportConnection)
        /// Queued messages go first: `.now` enters the actor, whose machine parks it.
        case behindOutbox
    }
}
