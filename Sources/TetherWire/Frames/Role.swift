/// Which end of a WebSocket connection this codec speaks for.
///
/// The role decides masking: a client masks every frame it sends and rejects masked frames;
/// a server sends unmasked frames and rejects unmasked ones (RFC 6455 §5.1).
public enum Role: Sendable {
    case client
    case server
}
