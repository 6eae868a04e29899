/// A `Retry-After` field of a response (RFC 9110 §10.2.3): `HTTP-date / delay-seconds`.
///
/// delay-seconds (`1*DIGIT`) may have any number of digits: a value beyond `Int.max` saturates, it is never
/// ignored for being long. An HTTP-date (IMF-fixdate, rfc850-date or asctime-date) only becomes a delay
/// against a clock, and TetherWire reads none: `delaySeconds(now:)` takes the current time from the caller, and
/// measures from the response's own `Date` field instead when it had a valid one (so that a server whose clock
/// is off still gets the wait it meant). The value is not capped here; the session caps the wait it schedules.
public struct RetryAfter: Hashable, Sendable {
    private enum Value: Hashable, Sendable {
        case seconds(Int)
        case date(HTTPDate, responseDate: HTTPDate?)
    }

    private let value: Value

    private init(_ value: Value) {
        self.value = value
    }

    /// A delay of `seconds` (the delay-seconds form); a negative value counts as 0.
    public static func seconds(_ seconds: Int) -> RetryAfter {
        RetryAfter(.seconds(max(0, seconds)))
    }

    /// Parses a `Retry-After` field value; nil when it is neither form (empty, signed, fractional, a date that
    /// does not exist, ...), so that the caller treats it as absent.
    ///
    /// - Parameters:
    ///   - value: the field value without surrounding whitespace.
    ///   - responseDate: the response's `Date` field value, if it had exactly one; an invalid one is ignored.
    public init?(_ value: some StringProtocol, responseDate: String? = nil) {
        if let seconds = Self.delaySeconds(value) {
            self.init(.seconds(seconds))
        } else if let date = HTTPDate(value) {
            self.init(.date(date, responseDate: responseDate.flatMap { HTTPDate($0) }))
        } else {
            return nil
        }
    }

    /// The wait in whole seconds, never negative: delay-seconds as given; an HTTP-date minus the response's
    /// `Date`, or minus `now` when the response had none. A date in the past is 0 (retry without extra delay).
    ///
    /// - Parameter now: the current wall-clock time in seconds since 1970-01-01T00:00:00Z. It is read only to
    ///   turn an HTTP-date into a delay (and to choose the century of an rfc850-date's two-digit year).
    public func delaySeconds(now: Int) -> Int {
        switch self.value {
        case .seconds(let seconds):
            return seconds
        case .date(let date, let responseDate):
            let reference = responseDate?.secondsSinceEpoch(reference: now) ?? now
            let target = date.secondsSinceEpoch(reference: reference)
            let (delay, overflow) = target.subtractingReportingOverflow(reference)
            // Only an absurd `now` overflows: far in the past means a long wait, far in the future none.
            if overflow { return reference < 0 ? Int.max : 0 }
            return max(0, delay)
        }
    }

    /// `delaySeconds(now:)` in milliseconds, saturating at `Int.max`.
    public func delayMilliseconds(now: Int) -> Int {
        let (milliseconds, overflow) = self.delaySeconds(now: now).multipliedReportingOverflow(by: 1000)
        return overflow ? Int.max : milliseconds
    }

    /// `1*DIGIT`, saturating at `Int.max`; nil when `value` is not all ASCII digits.
    private static func delaySeconds(_ value: some StringProtocol) -> Int? {
        guard !value.utf8.isEmpty else { return nil }
        var seconds = 0
        for byte in value.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (shifted, overflowMultiplying) = seconds.multipliedReportingOverflow(by: 10)
            let (next, overflowAdding) = shifted.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            // Keep reading: a non-digit later still makes the whole value invalid.
            seconds = overflowMultiplying || overflowAdding ? Int.max : next
        }
        return seconds
    }
}
