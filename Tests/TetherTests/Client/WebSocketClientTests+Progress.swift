import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

/// The client asks its connection what it has received only when a pong is overdue, and the machine decides
/// whether a frame still arriving explains the delay (heartbeat 100 ms / 1 s, as `makeClient` sets it).
extension WebSocketClientTests {
    static func arriving(since lastByte: Duration) -> InboundProgress {
        InboundProgress(
            framesCompleted: 2, frameInProgress: true, sinceLastByte: lastByte, sinceLastFrameCompleted: nil)
    }

    @Test func aFrameStillArrivingWhenThePongIsDueKeepsTheConnectionUntilItsBytesStop() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        #expect(connection.inboundProgressAsked == 0)  // not before the deadline

        connection.setInboundProgress(Self.arriving(since: .milliseconds(10)))  // bytes at 1 090
        self.clock.advance(toMilliseconds: 1_100)
        let moved = await probe.record(.pongDeadlineMoved)
        #expect(moved?.event == .pongDeadlineMoved(deadline: 2_090))
        #expect(await client.state.phase == .open)

        // The bytes stopped at 1 090: at 2 090 the frame has had a full timeout without one.
        connection.setInboundProgress(Self.arriving(since: .milliseconds(1_000)))
        self.clock.advance(toMilliseconds: 2_089)
        self.clock.advance(toMilliseconds: 2_090)
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        let closed = await probe.record(.closed)
        #expect(closed?.reason == .pongTimeout && closed?.time == 2_090)
        #expect(connection.inboundProgressAsked == 2)  // once at each deadline
    }

    @Test func aPongBehindTheFrameIsAcceptedWithItsRoundTrip() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        connection.setInboundProgress(Self.arriving(since: .milliseconds(1)))
        self.clock.advance(toMilliseconds: 1_100)
        #expect(await probe.record(.pongDeadlineMoved) != nil)
        self.clock.advance(toMilliseconds: 1_500)
        connection.emit(.message(.binary(Data(count: 4_096))))
        connection.emit(.pong(id: 1))
        let pong = await probe.record(.pong)
        #expect(pong?.rtt == 1_400)
        let state = await client.state
        #expect(state.generation == 1 && state.phase == .open)
    }

    /// A pong the transport decoded but the client has not handled yet is waited for when its bytes came before the
    /// deadline, and is late when they came at or after it.
    @Test(arguments: [true, false])
    func aDecodedPongIsWaitedForOnlyWhenItsBytesCameBeforeTheDeadline(arrivedBefore: Bool) async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        self.clock.advance(toMilliseconds: 100)
        #expect(await connection.nextCommand() == .ping(1))
        // At the deadline (1 100): the frame it queued behind and the pong came 5 ms before it, or at it.
        let since: Duration = arrivedBefore ? .milliseconds(5) : .zero
        connection.setInboundProgress(InboundProgress(
            framesCompleted: 2, frameInProgress: false, sinceLastByte: since, sinceLastFrameCompleted: since,
            latestPongID: 1, sinceLatestPong: since))
        self.clock.advance(toMilliseconds: 1_100)
        if arrivedBefore {
            #expect(await probe.record(.pongDeadlineMoved)?.event == .pongDeadlineMoved(deadline: 2_100))
            connection.emit(.pong(id: 1))
            #expect(await probe.record(.pong)?.rtt == 1_000)
            #expect(await client.state.phase == .open)
        } else {
            #expect(await connection.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
            #expect(await probe.record(.closed)?.time == 1_100)
        }
    }

    @Test func anIdleConnectionWhosePongsComeIsNeverAskedAndOneThatCannotTellClosesAtTheDeadline() async throws {
        let (client, probe) = try self.makeClient()
        let connection = try await self.transport.open(client, probe)
        guard await self.answerPings(rounds: 3, on: connection, probe) else { return }
        #expect(connection.inboundProgressAsked == 0)

        // A transport that cannot see frames (nil, the default): asked once, closed at the deadline as before.
        self.clock.advance(toMilliseconds: 700)
        #expect(await connection.nextCommand() == .ping(4))
        self.clock.advance(toMilliseconds: 1_700)
        #expect(await connection.nextCommand() == .close(code: 1001, reason: "pong_timeout"))
        #expect(await probe.record(.closed)?.time == 1_700)
        #expect(connection.inboundProgressAsked == 1)
    }
}
