import Foundation
import TetherCore

/// The dates URLSession measured for one request of a task (`URLSessionTaskTransactionMetrics`, the last one: the
/// hop that opened or failed), copied out of the metrics object so that the mapping to `AttemptTimings` runs and
/// is tested on every platform. A date the task did not reach is nil (Apple: "if that aspect of the task could not
/// be completed, then the corresponding EndDate metric will be nil"); a reused connection has no lookup, connect or
/// TLS dates.
struct URLSessionTransactionTimes: Equatable, Sendable {
    var fetchStart: Date?
    var domainLookupStart: Date?
    var domainLookupEnd: Date?
    var connectStart: Date?
    var secureConnectionStart: Date?
    var secureConnectionEnd: Date?
    /// After the TCP connect and the TLS handshake ("including completion of security-related and other
    /// handshakes").
    var connectEnd: Date?
    var requestStart: Date?
    var responseStart: Date?
    /// The numeric address connected to (a proxy's, through one), without its port: URLSession's `remoteAddress`.
    var remoteAddress: String?

    /// The steps, in milliseconds (to the nearest) from `fetchStart` (the task's start): resolve (`domainLookup`),
    /// the connect (one, up to TLS's start, or to `connectEnd` without TLS), TLS (`secureConnection`; full or
    /// resumed is not told), the upgrade (from `requestStart` to the response's first byte). A step begun and not ended is unfinished,
    /// timed up to `end` (when the metrics were collected). Nil without a `fetchStart`.
    func timings(until end: Date) -> AttemptTimings? {
        guard let origin = self.fetchStart else { return nil }
        func offset(_ date: Date) -> Int { max(0, Int((date.timeIntervalSince(origin) * 1_000).rounded())) }
        func step(_ start: Date?, _ finish: Date?) -> AttemptTimings.Step? {
            guard let start else { return nil }
            let (from, to) = (offset(start), offset(finish ?? end))
            return AttemptTimings.Step(start: from, duration: max(0, to - from), finished: finish != nil)
        }
        var timings = AttemptTimings()
        timings.resolve = step(self.domainLookupStart, self.domainLookupEnd)
        if let connect = step(self.connectStart, self.secureConnectionStart ?? self.connectEnd) {
            let address = self.remoteAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "unknown"
            timings.tcp = [AttemptTimings.TCPAttempt(
                address: address, start: connect.start, duration: connect.duration,
                outcome: connect.finished ? .connected : .unfinished)]
        }
        timings.tls = step(self.secureConnectionStart, self.secureConnectionEnd)
        timings.upgrade = step(self.requestStart, self.responseStart)
        return timings
    }
}
