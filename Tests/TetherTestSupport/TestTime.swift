#if os(Linux)
import Glibc

/// How much slower than a plain debug build this test process runs: 1 normally, more under ThreadSanitizer, which
/// slows every access it instruments (`scripts/tsan.sh` sets `TETHER_TEST_TIME_SCALE`).
///
/// Real-time bounds that only guard a test, or that leave room for a loaded machine, are multiplied by it: a guard
/// against a wait that never ends, a connect deadline of a real socket, the window in which a late event still
/// counts as on time. What such a test asserts stays the same (the event comes, in order, not early); only how long
/// a slowed process may take to show it grows. Bounds that are what a test measures are not scaled: such a test runs
/// in its own CI step (`TETHER_TIMING_TESTS`), not under the sanitizer.
package enum TestTime {
    /// `TETHER_TEST_TIME_SCALE`, at least 1; 1 when unset or not a number.
    package static let scale: Int = {
        guard let value = getenv("TETHER_TEST_TIME_SCALE"), let scale = Int(String(cString: value)) else { return 1 }
        return max(1, scale)
    }()

    /// `duration` times `scale`.
    package static func scaled(_ duration: Duration) -> Duration {
        duration * self.scale
    }

    /// `milliseconds` times `scale`.
    package static func scaled(milliseconds: Int) -> Int {
        milliseconds * self.scale
    }
}
#endif
