#if os(Linux)
import Foundation
import Tether
import TetherTestServer

/// The server side of a round: where the client connects, what the plan's server-side steps do there, and every
/// data message each of its connections received, exactly as received.
protocol UsePeer: Sendable {
    /// Where the client connects.
    var url: URL { get }
    /// The server closes its latest open connection with `code`, now; false when this peer cannot be told to (it
    /// closes on its own, if at all).
    func closeLatest(code: UInt16) async -> Bool
    /// The server resets its latest live connection, now; false when this peer cannot be told to.
    func resetLatest() async -> Bool
    /// Once every connection the peer accepted, at least `opened` of them (those the client saw open), has ended
    /// (waiting at most `timeout`, a guard), what each received, in the order the connections were accepted (the
    /// order of the client's generations); a failure naming what is still open when a connection did not end in time.
    func arrivals(timeout: Duration, opened: Int) async -> Result<[[WebSocketMessage]], UsePeerFailure>
    /// A line per connection (what it received, how it ended), for a failure's diagnosis.
    var connectionSummaries: [String] { get }
}

struct UsePeerFailure: Error, CustomStringConvertible {
    var description: String
}

/// Tether's test server, echoing and recording every payload, accepting permessage-deflate (window 15, context
/// takeover both ways) when the client offers it.
struct TestServerUsePeer: UsePeer {
    let server: TestServer

    init() throws {
        var configuration = TestServer.Configuration()
        configuration.recordLimit = 1_000_000  // every message of every connection, for the verdict
        configuration.endedConnectionLimit = 100_000
        self.server = try TestServer(
            configuration: configuration, scenario: Scenario.echo.recordingPayloads().deflating())
    }

    var url: URL { URL(string: self.server.url(path: "/use"))! }

    /// The latest connection whose handshake was answered and that has not ended.
    private var latestOpen: Int? {
        self.server.connections.last { $0.openedAt != nil && !$0.hasEnded }?.index
    }

    func closeLatest(code: UInt16) async -> Bool {
        guard let index = self.latestOpen else { return true }
        _ = try? await self.server.close(connection: index, code: code, reason: "randomized")
        return true
    }

    func resetLatest() async -> Bool {
        guard let index = self.latestOpen else { return true }
        _ = await self.server.reset(connection: index)
        return true
    }

    func arrivals(timeout: Duration, opened: Int) async -> Result<[[WebSocketMessage]], UsePeerFailure> {
        var snapshot: [ConnectionRecord]? = nil
        // A connection the client began just before it let go can be accepted after the others ended: wait again.
        while snapshot.map({ $0.count < self.server.acceptedConnectionCount }) ?? true {
            do {
                snapshot = try await self.server.waitUntil(timeout: timeout) { records in
                    records.count >= opened && records.allSatisfy(\.hasEnded)
                }
            } catch {
                let open = self.server.connections.filter { !$0.hasEnded }.map { "\($0.index)" }
                return .failure(UsePeerFailure(description: "connections \(open) never ended (\(error))"))
            }
        }
        let records = snapshot ?? []
        if let cut = records.first(where: { $0.messages.dropped > 0 }) {
            return .failure(UsePeerFailure(description: "connection \(cut.index) did not keep every message"))
        }
        return .success(records.map { record in
            record.messages.map { message in
                let payload = message.payload ?? []
                return switch message.kind {
                case .text: .text(String(decoding: payload, as: UTF8.self))
                case .binary: .binary(Data(payload))
                }
            }
        })
    }

    var connectionSummaries: [String] {
        func close(_ record: CloseRecord?) -> String { record.map { "\($0.code ?? 0)@\($0.at)" } ?? "-" }
        return self.server.connections.map { record in
            "connection \(record.index): opened \(record.openedAt.map { "\($0)" } ?? "-"), "
                + "\(record.messageCount) messages, close sent \(close(record.closeSent)), "
                + "received \(close(record.closeReceived)), end \(record.end.map { "\($0.reason)@\($0.at)" } ?? "-")"
        }
    }

    func stop() async {
        await self.server.stop()
    }
}
#endif
