/// Waits until this test process's cooperative thread pool answers promptly.
///
/// Real-link tests bound Tether's latency in tens of milliseconds (a reconnect within 300 ms, a pong timeout
/// within 50 ms). In the first seconds of a parallel `swift test`, CPU-bound tests of other suites can hold every
/// pool thread (there are as many as cores), and every hop of the client then waits for seconds: such a bound
/// would measure the test run, not Tether. This is not synchronisation with the code under test: it waits for
/// `streak` consecutive short sleeps to each wake within `slack` of their deadline, and gives up after `limit`
/// (the latency bounds then fail and say so).
enum ResponsiveScheduler {
    static func wait(
        streak: Int = 20, slack: Duration = .milliseconds(5), limit: Duration = .seconds(60)
    ) async {
        let clock = ContinuousClock()
        let giveUp = clock.now + limit
        let nap = Duration.milliseconds(2)
        var prompt = 0
        while prompt < streak, clock.now < giveUp {
            let start = clock.now
            try? await Task.sleep(for: nap)
            prompt = start.duration(to: clock.now) < nap + slack ? prompt + 1 : 0
        }
    }
}
