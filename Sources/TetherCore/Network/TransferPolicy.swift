/// What automatic transfers the app should do on the current path. User operations are never dropped for it.
public enum TransferPolicy: Equatable, Hashable, Sendable {
    /// No restriction.
    case normal
    /// The path is expensive (for example cellular or a hotspot): defer large automatic transfers.
    case deferLarge
    /// The path is constrained (Low Data Mode): only what the user explicitly asked for.
    case essentialOnly
}
