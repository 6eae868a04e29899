import Foundation
import TetherWire

extension RetryAfter {
    /// The wait in milliseconds as of now, for `TransportEnd.handshakeRejected`. Tether's one read of the wall
    /// clock: only to turn an HTTP-date into a delay when the response had no `Date` of its own. The session
    /// keeps monotonic time and caps the result (`WebSocketConfiguration.maximumRetryAfter`).
    var millisecondsFromNow: Int {
        self.delayMilliseconds(now: Int(Date().timeIntervalSince1970.rounded(.down)))
    }
}
