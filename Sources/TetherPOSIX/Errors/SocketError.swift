import Glibc

/// Why a socket operation failed. The common network failures have their own cases so callers can
/// decide on retries without decoding `errno`; anything else keeps the operation name and `errno`.
package enum SocketError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The peer actively refused the connection (`ECONNREFUSED`): nothing listens on that port.
    case refused
    /// No route to the network or host (`ENETUNREACH`, `EHOSTUNREACH`, `ENETDOWN`).
    case unreachable
    /// The operation did not finish in time (our own deadline or the kernel's `ETIMEDOUT`).
    case timedOut
    /// The peer reset the connection (`ECONNRESET`).
    case reset
    /// Writing to a connection whose peer has gone away (`EPIPE`).
    case brokenPipe
    /// The operation was attempted on a socket or event loop that is already closed.
    case closed
    /// The address is already in use (`EADDRINUSE`).
    case addressInUse
    /// The task waiting for the operation was cancelled; nothing is left behind.
    case cancelled
    /// `getaddrinfo` failed with this `EAI_*` code.
    case nameResolution(code: Int32)
    /// Any other failure of a system call.
    case system(operation: String, errno: Int32)

    /// Maps an `errno` from `operation` to the matching case.
    package init(operation: String, errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN: self = .unreachable
        case ETIMEDOUT: self = .timedOut
        case ECONNRESET: self = .reset
        case EPIPE: self = .brokenPipe
        case EADDRINUSE: self = .addressInUse
        case EBADF: self = .closed
        default: self = .system(operation: operation, errno: code)
        }
    }

    package var description: String {
        switch self {
        case .refused: "connection refused"
        case .unreachable: "network or host unreachable"
        case .timedOut: "timed out"
        case .reset: "connection reset by peer"
        case .brokenPipe: "broken pipe (the peer closed the connection)"
        case .closed: "socket is closed"
        case .addressInUse: "address already in use"
        case .cancelled: "cancelled"
        case .nameResolution(let code): "name resolution failed: \(String(cString: gai_strerror(code)))"
        case .system(let operation, let code):
            "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
