/// An HTTP-date (RFC 9110 §5.6.7) as it was sent, in one of the three forms a recipient must accept:
///
///     Sun, 06 Nov 1994 08:49:37 GMT    IMF-fixdate (the only one a sender may generate)
///     Sunday, 06-Nov-94 08:49:37 GMT   rfc850-date (obsolete: a two-digit year)
///     Sun Nov  6 08:49:37 1994         asctime-date (obsolete: GMT is implied)
///
/// Parsed by hand to its civil fields (TetherWire has no Foundation), then turned into seconds since the Unix
/// epoch with days-from-civil arithmetic. Names are case-sensitive as in the grammar; the day name is not
/// checked against the date; a day that does not exist in its month, an hour over 23, a minute over 59 or a
/// second over 60 (a leap second) makes the value invalid.
struct HTTPDate: Hashable, Sendable {
    /// The year; for an rfc850-date its last two digits (the century is chosen by `secondsSinceEpoch`).
    var year: Int
    var twoDigitYear: Bool
    /// 1...12.
    var month: Int
    /// 1...31.
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// Parses `text` (already stripped of surrounding whitespace); nil when it is none of the three forms.
    init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard let date = Self.imfFixdate(bytes) ?? Self.rfc850Date(bytes) ?? Self.asctimeDate(bytes) else {
            return nil
        }
        self = date
    }

    private init(year: Int, twoDigitYear: Bool, month: Int, day: Int, time: (Int, Int, Int)) {
        self.year = year
        self.twoDigitYear = twoDigitYear
        self.month = month
        self.day = day
        (self.hour, self.minute, self.second) = time
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    ///
    /// - Parameter reference: when the date was received, in seconds since the epoch; used only to choose the
    ///   century of an rfc850-date's two-digit year. RFC 9110 makes a year that appears more than 50 years in
    ///   the future the most recent past year with the same last two digits; that is applied at the year's
    ///   granularity, so the year is the one with those digits in (reference year − 50, reference year + 50].
    func secondsSinceEpoch(reference: Int) -> Int {
        var year = self.year
        if self.twoDigitYear {
            // Clamped so that an absurd reference cannot overflow the arithmetic below.
            let referenceYear = min(max(Self.civilYear(ofSecondsSinceEpoch: reference), 0), 9999)
            year += referenceYear - referenceYear % 100
            if year > referenceYear + 50 {
                year -= 100
            } else if year <= referenceYear - 50 {
                year += 100
            }
        }
        let days = Self.daysFromCivil(year: year, month: self.month, day: self.day)
        return days * 86_400 + self.hour * 3_600 + self.minute * 60 + self.second
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, after H. Hinnant's days_from_civil)

    /// Days from 1970-01-01 to the given date (negative before it).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400  // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // from March 1st
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil year of an instant given in seconds since the epoch.
    static func civilYear(ofSecondsSinceEpoch seconds: Int) -> Int {
        let days = seconds >= 0 ? seconds / 86_400 : -((-(seconds + 1)) / 86_400) - 1
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        // January and February belong to the next civil year.
        return yearOfEra + era * 400 + (monthFromMarch >= 10 ? 1 : 0)
    }

    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(_ month: Int, twoDigitYear: Bool, year: Int) -> Int {
        switch month {
        case 2:
            // A two-digit year's century is not known yet: 00 may be 2000 (leap) or 2100 (not).
            (twoDigitYear ? year % 4 == 0 : Self.isLeapYear(year)) ? 29 : 28
        case 4, 6, 9, 11:
            30
        default:
            31
        }
    }

    // MARK: - The three forms

    static let shortDayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"`.
    private static func imfFixdate(_ bytes: [UInt8]) -> HTTPDate? {
        var cursor = DateCursor(bytes)
        guard cursor.name(in: Self.shortDayNames) != nil, cursor.literal(", "),
            let day = cursor.digits(2), cursor.literal(" "),
            let month = cursor.name(in: Self.monthNames), cursor.literal(" "),
            let year = cursor.digits(4), cursor.literal(" "),
            let time = cursor.timeOfDay(), cursor.literal(" GMT"), cursor.atEnd
        else {
            return nil
        }
        return Self.validated(year: year, twoDigitYear: false, month: month + 1, day: day, time: time)
    }

    /// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"`.
    private static func rfc850Date(_ bytes: [UInt8]) -> HTTPDate? {
        var cursor = DateCursor(bytes)
        guard cursor.name(in: Self.longDayNames) != nil, cursor.literal(", "),
            let day = cursor.digits(2), cursor.literal("-"),
            let month = cursor.name(in: Self.monthNames), cursor.literal("-"),
            let year = cursor.digits(2), cursor.literal(" "),
            let time = cursor.timeOfDay(), cursor.literal(" GMT"), cursor.atEnd
        else {
            return nil
        }
        return Self.validated(year: year, twoDigitYear: true, month: month + 1, day: day, time: time)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT`.
    private static func asctimeDate(_ bytes: [UInt8]) -> HTTPDate? {
        var cursor = DateCursor(bytes)
        guard cursor.name(in: Self.shortDayNames) != nil, cursor.literal(" "),
            let month = cursor.name(in: Self.monthNames), cursor.literal(" "),
            let day = cursor.literal(" ") ? cursor.digits(1) : cursor.digits(2), cursor.literal(" "),
            let time = cursor.timeOfDay(), cursor.literal(" "),
            let year = cursor.digits(4), cursor.atEnd
        else {
            return nil
        }
        return Self.validated(year: year, twoDigitYear: false, month: month + 1, day: day, time: time)
    }

    private static func validated(
        year: Int, twoDigitYear: Bool, month: Int, day: Int, time: (Int, Int, Int)
    ) -> HTTPDate? {
        guard day >= 1, day <= Self.daysInMonth(month, twoDigitYear: twoDigitYear, year: year),
            time.0 <= 23, time.1 <= 59, time.2 <= 60
        else {
            return nil
        }
        return HTTPDate(year: year, twoDigitYear: twoDigitYear, month: month, day: day, time: time)
    }
}

/// Reads an HTTP-date left to right; every method consumes only on success.
private struct DateCursor {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { self.index == self.bytes.count }

    /// Consumes `text` exactly (case-sensitive).
    mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard self.bytes.count - self.index >= count else { return false }
        let matches = text.withUTF8Buffer { expected in
            expected.elementsEqual(self.bytes[self.index..<(self.index + count)])
        }
        if matches { self.index += count }
        return matches
    }

    /// Consumes the first of `names` found here (case-sensitive) and returns its index.
    mutating func name(in names: [String]) -> Int? {
        for (position, name) in names.enumerated() {
            let count = name.utf8.count
            if self.bytes.count - self.index >= count,
                name.utf8.elementsEqual(self.bytes[self.index..<(self.index + count)]) {
                self.index += count
                return position
            }
        }
        return nil
    }

    /// Consumes exactly `count` ASCII digits.
    mutating func digits(_ count: Int) -> Int? {
        guard self.bytes.count - self.index >= count else { return nil }
        var value = 0
        for byte in self.bytes[self.index..<(self.index + count)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        self.index += count
        return value
    }

    /// `2DIGIT ":" 2DIGIT ":" 2DIGIT`, unchecked ranges. Consumes only when all of it is there.
    mutating func timeOfDay() -> (Int, Int, Int)? {
        let start = self.index
        guard let hour = self.digits(2), self.literal(":"), let minute = self.digits(2), self.literal(":"),
            let second = self.digits(2)
        else {
            self.index = start
            return nil
        }
        return (hour, minute, second)
    }
}
