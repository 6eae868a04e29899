#if os(Linux)
import Tether
import TetherCore

extension CheckScenarios {
    /// Expects the attempt's timings on `record` (an `opened`, or the `closed` of an attempt that failed): the name
    /// resolved first, then the TCP connects (the last one ending as `lastTCP` says), then the upgrade when
    /// `upgraded`, each step starting no earlier than the one before it ended; notes them as evidence.
    static func expectTimings(
        _ run: ScenarioRun, on record: LogRecord?, lastTCP: AttemptTimings.TCPAttempt.Outcome, upgraded: Bool
    ) {
        let kind = record?.kind.rawValue ?? "record"
        guard let timings = record?.timings else {
            run.expect(false, "the \(kind) record carries the attempt's timings", "none")
            return
        }
        let steps = [timings.resolve] + timings.tcp.map { AttemptTimings.Step(start: $0.start, duration: $0.duration) }
            + [timings.tls, timings.upgrade]
        let reached = steps.compactMap { $0 }
        let ordered = zip(reached, reached.dropFirst()).allSatisfy { $0.end <= $1.start }
        run.expect(
            timings.resolve?.finished == true && timings.tcp.last?.outcome == lastTCP
                && (timings.upgrade?.finished == true) == upgraded && ordered,
            "the \(kind) record times resolve, TCP (\(lastTCP))\(upgraded ? " and the upgrade" : ""), in order",
            timings.description)
        run.note("timings", timings.description)
    }
}
#endif
