import Testing
@testable import TetherWire

@Suite struct RetryAfterTests {
    /// 1994-11-06T08:49:37Z, RFC 9110's example instant, in seconds since the epoch.
    static let example = 784_111_777
    /// 2025-06-15T12:00:00Z: a "now" for the tests that need one.
    static let now = 1_749_988_800

    func delay(_ value: String, responseDate: String? = nil, now: Int = Self.now) -> Int? {
        RetryAfter(value, responseDate: responseDate)?.delaySeconds(now: now)
    }

    // MARK: delay-seconds

    @Test func delaySecondsOfAnyLengthAreTakenAndSaturateInsteadOfOverflowing() {
        #expect(self.delay("0") == 0)
        #expect(self.delay("120") == 120)
        #expect(self.delay("0000120") == 120)
        #expect(self.delay("999999999") == 999_999_999)  // nine digits: 31.7 years, left for the session to cap
        #expect(self.delay("9999999999") == 9_999_999_999)  // ten digits: no longer ignored
        #expect(self.delay("9223372036854775807") == Int.max)
        #expect(self.delay("9223372036854775808") == Int.max)
        #expect(self.delay(String(repeating: "9", count: 400)) == Int.max)
        #expect(RetryAfter("120") == .seconds(120))
    }

    @Test func delaySecondsIgnoreTheClock() {
        #expect(self.delay("30", now: 0) == 30)
        #expect(self.delay("30", responseDate: "Sun, 06 Nov 1994 08:49:37 GMT", now: -5) == 30)
    }

    @Test func millisecondsSaturateToo() {
        #expect(RetryAfter("120")?.delayMilliseconds(now: Self.now) == 120_000)
        #expect(RetryAfter("9223372036854776")?.delayMilliseconds(now: Self.now) == Int.max)
        #expect(RetryAfter.seconds(-3).delayMilliseconds(now: Self.now) == 0)
    }

    // MARK: HTTP-date

    @Test func imfFixdateIsMeasuredFromTheResponsesDateWhateverTheLocalClockSays() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(self.delay(date, responseDate: "Sun, 06 Nov 1994 08:48:37 GMT") == 60)
        #expect(self.delay(date, responseDate: "Sun, 06 Nov 1994 08:48:37 GMT", now: 0) == 60)
        #expect(self.delay("Wed, 01 Jan 2025 00:00:00 GMT", responseDate: "Tue, 31 Dec 2024 23:59:59 GMT") == 1)
    }

    @Test func imfFixdateWithoutADateHeaderIsMeasuredFromNow() {
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.example - 90) == 90)
        #expect(self.delay("Sun, 15 Jun 2025 12:05:00 GMT") == 300)
        // An invalid Date header is ignored, not trusted.
        #expect(self.delay("Sun, 15 Jun 2025 12:05:00 GMT", responseDate: "yesterday") == 300)
    }

    @Test func theObsoleteFormsGiveTheSameInstant() {
        let now = Self.example - 42
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == 42)
        #expect(self.delay("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == 42)
        #expect(self.delay("Sun Nov  6 08:49:37 1994", now: now) == 42)
        #expect(self.delay("Wed Nov 16 08:49:37 1994", now: now) == 42 + 10 * 86_400)
        // The obsolete forms work as the response's Date too.
        #expect(self.delay("Sun, 06 Nov 1994 08:50:37 GMT", responseDate: "Sun Nov  6 08:49:37 1994") == 60)
        #expect(self.delay("Sun, 06 Nov 1994 08:50:37 GMT", responseDate: "Sunday, 06-Nov-94 08:49:37 GMT") == 60)
    }

    @Test func anRfc850TwoDigitYearMoreThanFiftyYearsAheadIsInThePast() {
        // Now is 2025: "26" is 2026, "76" would be 2076, more than 50 years ahead, so it is 1976.
        #expect(self.delay("Thursday, 01-Jan-26 00:00:00 GMT") == 1_767_225_600 - Self.now)
        #expect(self.delay("Thursday, 01-Jan-76 00:00:00 GMT") == 0)
        // Around a century: in 2099, "01" is 2101, not 2001.
        let endOf2099 = 4_102_444_799  // 2099-12-31T23:59:59Z
        #expect(self.delay("Saturday, 01-Jan-00 00:00:00 GMT", now: endOf2099) == 1)
    }

    @Test func aDateInThePastMeansNoExtraWait() {
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT") == 0)
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT", responseDate: "Sun, 15 Jun 2025 12:00:00 GMT") == 0)
        #expect(self.delay("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(self.delay("Mon, 01 Jan 0001 00:00:00 GMT") == 0)
        #expect(RetryAfter("Sun, 06 Nov 1994 08:49:37 GMT")?.delayMilliseconds(now: Self.now) == 0)
    }

    @Test func calendarEdgesAreExact() {
        #expect(self.delay("Tue, 29 Feb 2000 00:00:00 GMT", now: 0) == 951_782_400)
        #expect(self.delay("Fri, 31 Dec 9999 23:59:59 GMT", now: 0) == 253_402_300_799)
        #expect(self.delay("Thu, 01 Jan 1970 00:00:00 GMT", now: -1) == 1)
        #expect(self.delay("Thu, 01 Jan 1970 00:00:00 GMT", responseDate: "Wed, 31 Dec 1969 23:59:59 GMT") == 1)
        // A leap second.
        #expect(self.delay("Wed, 31 Dec 2025 23:59:60 GMT", responseDate: "Wed, 31 Dec 2025 23:59:59 GMT") == 1)
        // An absurd local clock saturates instead of trapping.
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: Int.min) == Int.max)
        #expect(self.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: Int.max) == 0)
        #expect((self.delay("Sunday, 06-Nov-94 08:49:37 GMT", now: Int.min) ?? 0) > Int.max / 2)
    }

    // MARK: Invalid values

    static let garbage = [
        "", " ", "-5", "+5", "5.0", "5s", "1e3", "0x10", "5 6", " 5", "5 ", "٥",  // Arabic-Indic digit five
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37", "sun, 06 nov 1994 08:49:37 gmt",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT trailing", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT", "Tue, 29 Feb 2022 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nvm 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 06 Nov 94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:49:37 1994 GMT",
        "Sunday, 31-Apr-94 08:49:37 GMT", "1994-11-06T08:49:37Z",
    ]

    @Test(arguments: Self.garbage)
    func invalidValuesAreNotUnderstood(value: String) {
        #expect(RetryAfter(value) == nil)
    }
}
