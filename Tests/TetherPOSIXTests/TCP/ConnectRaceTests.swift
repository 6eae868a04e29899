#if os(Linux)
import Testing
@testable import TetherPOSIX
import TetherTestSupport

/// `TCPConnection.connect` racing real sockets on loopback. A listener that never accepts, with its backlog full,
/// drops SYNs silently: the stand-in for an address whose packets vanish.
@Suite(.timeLimit(.minutes(1)))
struct ConnectRaceTests {
    /// A listener whose backlog is full: a connect to it neither succeeds nor fails until a deadline.
    struct SilentListener {
        let listener: TCPListener
        var held: [TCPConnection] = []

        init(loop: EventLoop) async throws {
            self.listener = try TCPListener.bind(backlog: 0, loop: loop)
            while true {
                let attempt = Task { [listener] in
                    try await connect(to: [listener.address], timeout: .milliseconds(150), loop: loop)
                }
                guard case .success(let connection) = await attempt.result else { break }
                self.held.append(connection)
            }
        }

        func close() async {
            self.held.forEach { $0.close() }
            await self.listener.close()
        }
    }

    @Test func aSilentFirstAddressLosesToTheNextOneStartedAfterTheAttemptDelay() async throws {
        let loop = try EventLoop(name: "test-race")
        defer { loop.shutdown() }
        let silent = try await SilentListener(loop: loop)
        let listener = try startEchoServer(loop: loop)
        let started = ContinuousClock.now
        let client = try await TCPConnection.connect(
            to: [silent.listener.address, listener.address], timeout: .seconds(10), attemptDelay: .milliseconds(100),
            loop: loop)
        let elapsed = started.duration(to: .now)
        #expect(client.remoteAddress == listener.address)
        #expect(elapsed >= .milliseconds(100), "the second attempt waited for the delay")
        #expect(elapsed < TestTime.scaled(.seconds(5)), "connected after \(elapsed)")
        client.close()
        await listener.close()
        await silent.close()
        // Two for the loop itself, nothing else: the losing attempt's socket was closed. The echo server's side of the
        // connection closes on the loop once it reads the client's end of stream, which can come after this point (a
        // loaded TSan run counted it): the count is awaited, bounded, rather than read once.
        #expect(try await Self.ownedDescriptors(of: loop, settleAt: 2) == 2)
    }

    /// The loop's owned descriptors once they are down to `target`, or what they are after 5 s.
    static func ownedDescriptors(of loop: EventLoop, settleAt target: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        var owned = try await loop.submit { loop.ownedDescriptorCount }
        while owned > target, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            owned = try await loop.submit { loop.ownedDescriptorCount }
        }
        return owned
    }

    @Test func aFailureListsEveryAddressTriedWithItsError() async throws {
        let loop = try EventLoop(name: "test-race-fail")
        defer { loop.shutdown() }
        let silent = try await SilentListener(loop: loop)
        let reserved = try ReservedPort()
        let result = await TCPConnection.race(
            to: [silent.listener.address, reserved.address], timeout: .milliseconds(300),
            attemptDelay: .milliseconds(50), loop: loop)
        guard case .failure(let failure) = result else {
            Issue.record("connected to an address that cannot accept")
            return
        }
        // The refused address failed first; the silent one was still in flight when the deadline passed.
        #expect(failure.error == .timedOut)
        #expect(failure.attempts.map(\.address) == [reserved.address, silent.listener.address])
        #expect(failure.attempts.map(\.error) == [.refused, .timedOut])
        #expect(failure.description.contains("\(reserved.address): connection refused"))
        await silent.close()
        #expect(try await loop.submit { loop.ownedDescriptorCount } == 2)
    }
}
#endif
