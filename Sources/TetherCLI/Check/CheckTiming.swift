import TetherCore

/// The timings `tether check` runs with: short, so that the whole matrix takes a few seconds.
package struct CheckTiming: Equatable, Sendable {
    /// Heartbeat interval, ms.
    package var interval = 50
    /// Pong timeout, ms.
    package var timeout = 100
    /// First backoff delay, ms (factor 2, jitter 0–50 %).
    package var backoffBase = 40
    /// Backoff cap, ms.
    package var backoffCap = 2_000
    /// How late a timer may fire on a busy machine before a timing check fails, ms.
    package var tolerance = 100
    /// The longest any single wait may take before the scenario fails.
    package var waitLimit = Duration.seconds(5)
    /// How much the process's resident memory may grow during a flood scenario: room for the client's bounded
    /// buffers (1 MiB each way by default) and the allocator, and a quarter of the 64 MiB a client without bounds
    /// would hold. Bytes. A run in a process shared with other work (the test suite) raises it: theirs counts too.
    package var residentGrowthLimit = 16 << 20

    package init() {}
}
