#if os(Linux)
import Testing
@testable import TetherCLI

/// `tether serve --deflate` and `tether connect --deflate` together: the offer, the answer, a compressed echo.
@Suite struct ServeDeflateTests {
    /// A JSON-like line well above the 128-byte threshold, so that both ends compress it.
    static let line = String(repeating: #"{"symbol":"TTHR","price":101.25,"size":300} "#, count: 8)

    @Test func connectWithDeflateAgreesWithServeWithDeflateAndTheEchoComesBackWhole() async throws {
        let served = try await Self.echoLine(serving: ["--echo", "--deflate"])
        // The server accepted connect's standard offer with its policy's defaults (windows of 15 bits, the RFC's own,
        // go unsaid), and inflated the message to its full size.
        #expect(served.contains("conn 1 opened with permessage-deflate"))
        #expect(served.contains("conn 1 text \(Self.line.utf8.count) bytes"))
    }

    @Test func connectWithDeflateOpensUncompressedWhenServeDeclines() async throws {
        let served = try await Self.echoLine(serving: ["--echo"])
        #expect(served.contains("conn 1 opened"))
        #expect(served.contains("conn 1 text \(Self.line.utf8.count) bytes"))
    }

    /// Runs `tether serve ARGUMENTS`, types `line` into `tether connect URL --deflate --count 1`, expects the echo
    /// printed and exit status 0, and returns what serve printed.
    static func echoLine(serving arguments: [String]) async throws -> [String] {
        let (served, _) = try await serving(serveOptions(arguments)) { url in
            let client = CapturedIO()
            client.type(Self.line)
            #expect(await TetherCommand.run(
                ["connect", url, "--deflate", "--count", "1", "--no-path-monitor"], io: client.io) == 0,
                "\(client.error)")
            #expect(client.outputLines == [Self.line])
        }
        return served.outputLines
    }
}
#endif
