import Foundation
import Tether
import TetherCore

/// A transport event in a form tests can compare.
enum Seen: Equatable, CustomStringConvertible {
    /// A hop: the status and the URL followed, whole (tests see what the transport asked).
    case redirected(Int, String)
    case opened(String?)
    case text(String)
    case binary(Data)
    case pong(UInt64)
    case pingFailed(UInt64)
    case ended(TransportEnd)

    init(_ event: TransportEvent) {
        switch event {
        case .redirected(let status, let url): self = .redirected(status, url.absoluteString)
        case .opened(let handshake): self = .opened(handshake.subprotocol)
        case .message(.text(let text)): self = .text(text)
        case .message(.binary(let data)): self = .binary(data)
        case .pong(let id): self = .pong(id)
        case .pingFailed(let id): self = .pingFailed(id)
        case .ended(let end): self = .ended(end)
        }
    }

    var description: String {
        switch self {
        case .redirected(let status, let url): "redirected(\(status), \(url))"
        case .opened(let subprotocol): "opened(\(subprotocol ?? "nil"))"
        case .text(let text): "text(\(text.count > 40 ? "\(text.utf8.count) bytes" : text))"
        case .binary(let data): "binary(\(data.count) bytes)"
        case .pong(let id): "pong(\(id))"
        case .pingFailed(let id): "pingFailed(\(id))"
        case .ended(let end): "ended(\(end))"
        }
    }
}
