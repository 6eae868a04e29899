#if os(Linux)
import Foundation
import Testing
import Tether
import TetherCore
@testable import TetherCLI
#if canImport(Glibc)
import Glibc
#endif

// Serialized: each flood takes both cores for seconds, so the two scenarios run one after the other (side by side, a
// fresh-clone CI run saw slow-consumer lose its connection while ping-flood ran beside it).
@Suite(.serialized) struct FloodScenariosTests {
    @Test func theFloodScenariosRunLastInTheCatalog() {
        #expect(CheckCatalog.names.count == 30)
        #expect(Array(CheckCatalog.names.suffix(2)) == ["slow-consumer", "ping-flood"])
        #expect(Set(CheckCatalog.names).count == CheckCatalog.names.count)
    }

    /// `tether check --only NAME` as a user runs it: the built binary in a child process, with the default timings
    /// and memory limit, so that the resident memory the scenario measures is its own and not the test suite's.
    ///
    /// A flood keeps both cores busy for seconds (the peer writing, the client answering), which starves the rest of
    /// a parallel `swift test` into connect timeouts on a 2-core machine, and the flood's own real-time bounds with
    /// it. So these run alone: `TETHER_FLOOD_TESTS=1 swift test --filter FloodScenariosTests`, as `.ci/run` does
    /// right after the suite.
    @Test(.enabled(if: ConnectProcessTests.binary != nil, "needs the tether binary beside the tests"),
          .enabled(if: ProcessInfo.processInfo.environment["TETHER_FLOOD_TESTS"] == "1",
                   "runs alone: set TETHER_FLOOD_TESTS=1"),
          arguments: ["slow-consumer", "ping-flood"])
    func passesWithOnlyInAProcessOfItsOwn(_ name: String) async throws {
        guard let binary = ConnectProcessTests.binary else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tether-flood-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["check", "--only", name, "--json", "--out", directory.path]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let status = ExitWatch()
        process.terminationHandler = { status.exited($0.terminationStatus, reason: $0.terminationReason) }
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }  // only if the test failed
        let guardTask = Task {
            try await Task.sleep(for: .seconds(60))  // a hung child fails the test instead of hanging it
            kill(process.processIdentifier, SIGKILL)
        }
        let exit = await status.wait()
        guardTask.cancel()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        #expect(exit.reason == .exit && exit.status == 0, "\(String(decoding: output, as: UTF8.self))")
        let summary = try #require(JSONSerialization.jsonObject(with: output) as? [String: Any])
        let scenarios = try #require(summary["scenarios"] as? [[String: Any]])
        #expect(scenarios.count == 1 && scenarios.first?["passed"] as? Bool == true, "\(scenarios)")
        let evidence = try #require(scenarios.first?["evidence"] as? [String: String])
        switch name {
        case "slow-consumer":
            #expect(evidence["messages"] == "4096/4096")
            #expect(Int(evidence["holds"] ?? "") ?? 0 >= 1, "\(evidence)")
            #expect(evidence["peak_unread"] != nil && evidence["rss_growth"] != nil, "\(evidence)")
        default:
            #expect(Int(evidence["pings_written"] ?? "") ?? 0 > 0, "\(evidence)")
            #expect(evidence["stalled"] == "yes" || evidence["stalled"] == "no", "\(evidence)")
            #expect(evidence["pongs_queued"] != nil, "\(evidence)")
            #expect(evidence["rss_growth"] != nil && evidence["stop"] != nil, "\(evidence)")
        }
    }

    @Test func theHoldSlackIsTheMessageThatCrossedPlusAFewRecords() {
        let slot = WebSocketEvent.bufferOverhead
        #expect(CheckScenarios.holdSlack(messageSize: 16 << 10) == 16_384 + slot + 8 * slot)
        #expect(CheckScenarios.holdSlack(messageSize: 1) == 1 + slot + 8 * slot)  // tiny messages add no turn's worth
    }

    @Test func onlyPingsBetweenAHoldAndItsResumeCount() {
        func record(_ event: LogRecord.Event, at time: Int) -> LogRecord {
            LogRecord(generation: 1, time: time, from: .open, to: .open, event: event)
        }
        let records = [
            record(.ping, at: 1), record(.readingHeld, at: 2), record(.pong(rtt: 1), at: 3), record(.readingResumed, at: 4),
            record(.ping, at: 4), record(.readingHeld, at: 5),
        ]
        #expect(CheckScenarios.pingsWhileHeld(records) == 0)
        #expect(CheckScenarios.pingsWhileHeld(records + [record(.ping, at: 6)]) == 1)
    }

    @Test func theTallyCountsTheLeadingRunInOrderWithoutKeepingMessages() {
        var tally = FloodReader.Tally()
        for message: WebSocketMessage in [.binary(Data("0...".utf8)), .text("1.."), .text("3."), .text("3.")] {
            tally.add(message)
        }
        #expect(tally == FloodReader.Tally(messages: 4, bytes: 11, first: 0, last: 3, inOrder: 2))
    }
}
#endif
