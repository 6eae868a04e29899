/// What `tether connect` says of an HTTP status a server or a proxy answered the upgrade with: its reason phrase
/// (RFC 9110), and for a refusal of the credentials what that means, so that a 401 reads as what it is.
enum HTTPStatusText {
    /// The reason phrase of the statuses a WebSocket upgrade meets; nil for others.
    static func phrase(_ status: Int) -> String? {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: nil
        }
    }

    /// `status` with its phrase (`401 Unauthorized`), or alone.
    static func described(_ status: Int) -> String {
        self.phrase(status).map { "\(status) \($0)" } ?? "\(status)"
    }
}
