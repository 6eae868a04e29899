#if os(Linux)
import Dispatch
import Glibc
import Synchronization
import Testing
@testable import TetherPOSIX

/// The reader against the kernel, in the test's own namespace (a route netlink dump needs no privilege).
@Suite struct RouteNetlinkReaderTests {
    /// What a handler saw, shared with the test; `done` is signalled at the end of the first dump and `stopped`
    /// when the reader stops on an error.
    final class Observations: Sendable {
        let messageTypes = Mutex<[UInt16]>([])
        let stoppedBy = Mutex<NetlinkReaderError?>(nil)
        let done = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
    }

    /// Dumps the links once; records each message's type; throws `failWith` on the first datagram if set.
    struct LinkDumpHandler: RouteNetlinkHandler {
        let observations: Observations
        var failWith: NetlinkReaderError?

        mutating func resynchronize() -> [[UInt8]] {
            // nlmsghdr (length 32, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, sequence 1, port 0), then ifinfomsg.
            let header: [UInt8] = [32, 0, 0, 0, 18, 0, 0x01, 0x03, 1, 0, 0, 0, 0, 0, 0, 0]
            return [header + [UInt8](repeating: 0, count: 16)]
        }

        mutating func receive(_ datagram: [UInt8]) throws(NetlinkReaderError) -> [[UInt8]] {
            if let failWith { throw failWith }
            var offset = 0
            while offset + 16 <= datagram.count {
                let length = Int(datagram[offset]) | Int(datagram[offset + 1]) << 8 | Int(datagram[offset + 2]) << 16
                let type = UInt16(datagram[offset + 4]) | UInt16(datagram[offset + 5]) << 8
                self.observations.messageTypes.withLock { $0.append(type) }
                if type == 3 { self.observations.done.signal() }  // NLMSG_DONE
                guard length >= 16 else { break }
                offset += (length + 3) & ~3
            }
            return []
        }

        mutating func stopped(by error: NetlinkReaderError) {
            self.observations.stoppedBy.withLock { $0 = error }
            self.observations.stopped.signal()
        }
    }

    static let groups: UInt32 = 1  // RTMGRP_LINK

    @Test func theFirstRequestsAreSentAndTheKernelsAnswersReachTheHandler() throws {
        let observations = Observations()
        let reader = try RouteNetlinkReader.launch(
            namespace: nil, groups: Self.groups, receiveBufferSize: 1 << 16,
            handler: LinkDumpHandler(observations: observations)
        )
        #expect(observations.done.wait(timeout: .now() + .seconds(10)) == .success)
        // At least the loopback link (RTM_NEWLINK, 16) before the end of the dump.
        let types = observations.messageTypes.withLock { $0 }
        #expect(types.first == 16)
        #expect(types.last == 3)
        reader.stop()
        #expect(reader.threadEnded.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(reader.failure == nil)
    }

    @Test func aHandlerThatThrowsStopsTheReaderWithItsError() throws {
        let observations = Observations()
        let reader = try RouteNetlinkReader.launch(
            namespace: nil, groups: Self.groups, receiveBufferSize: 1 << 16,
            handler: LinkDumpHandler(observations: observations, failWith: .dumpRefused(errno: EPERM))
        )
        #expect(reader.threadEnded.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(reader.failure == .dumpRefused(errno: EPERM))
        #expect(observations.stoppedBy.withLock { $0 } == .dumpRefused(errno: EPERM))
    }

    @Test func aMissingNamespaceFailsTheLaunch() {
        let path = "/var/run/netns/tether-reader-missing-\(getpid())"
        #expect(throws: NetlinkReaderError.namespaceUnavailable(path: path, errno: ENOENT)) {
            try RouteNetlinkReader.launch(
                namespace: path, groups: Self.groups, receiveBufferSize: 1 << 16,
                handler: LinkDumpHandler(observations: Observations())
            )
        }
    }
}
#endif
