import Foundation

/// A WebSocket message as the application sees it.
public enum WebSocketMessage: Equatable, Hashable, Sendable {
    case text(String)
    case binary(Data)
}
