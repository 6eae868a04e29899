#if os(Linux)
import Foundation
import Glibc
import Synchronization

/// The process's resident set size from `/proc/self/statm`, sampled on a thread of its own every millisecond from
/// `init` until `stop()`, so that a peak between two steps of a scenario is seen. A measurement, not a wait: nothing
/// synchronises on it.
final class ResidentMemory: Sendable {
    private struct State {
        var peak: Int
        var stopped = false
    }

    /// The resident size when sampling started, in bytes.
    let baseline: Int
    private let state: Mutex<State>
    private let ended = DispatchSemaphore(value: 0)

    /// Starts sampling; nil when `/proc/self/statm` cannot be read (not Linux's procfs).
    init?() {
        guard let baseline = Self.current() else { return nil }
        self.baseline = baseline
        self.state = Mutex(State(peak: baseline))
        let thread = Thread { [self] in
            while true {
                let sample = Self.current() ?? 0
                let stopped = self.state.withLock { state in
                    state.peak = max(state.peak, sample)
                    return state.stopped
                }
                if stopped { break }
                usleep(1_000)
            }
            self.ended.signal()
        }
        thread.name = "tether-check-rss"
        thread.start()
    }

    /// The resident size now, in bytes (also counted towards the peak).
    var now: Int {
        let sample = Self.current() ?? 0
        return self.state.withLock { state in
            state.peak = max(state.peak, sample)
            return sample
        }
    }

    /// The largest growth over the baseline seen so far, in bytes.
    var peakGrowth: Int { self.state.withLock { $0.peak } - self.baseline }

    /// Stops sampling and waits for the thread to end (it takes a sample at most every millisecond). Idempotent.
    func stop() {
        let first = self.state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { self.ended.wait() }
    }

    /// The resident size in bytes: the second field of `/proc/self/statm`, in pages.
    static func current() -> Int? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// A byte count for evidence: `812 KiB`, `1.3 MiB`.
func byteCountText(_ bytes: Int) -> String {
    let magnitude = abs(bytes)
    if magnitude < 1 << 20 { return "\(bytes / 1024) KiB" }
    let mebibytes = Double(bytes) / Double(1 << 20)
    return String(format: "%.1f MiB", mebibytes)
}
#endif
