#if os(Linux)
import Foundation
import TetherPOSIX
import TetherWire
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket server on loopback that accepts one connection, answers its handshake and then never reads from
/// it: whatever the client sends fills the kernel's buffers (the server's receive buffer is the smallest the
/// kernel allows), until the client's sends wait. `resetAfterMilliseconds` after the open it resets the connection,
/// as `Scenario.reset(afterMilliseconds:)` does, so that a client blocked in a send ends without a close timeout;
/// it accepts no second connection.
final class UnreadServer: Sendable {
    let port: Int
    private let ended = DispatchSemaphore(value: 0)
    /// A pipe written to by `stop()`: ends the wait before the reset. Both ends stay open until then.
    private let stopWriter: Int32
    private let stopReader: Int32

    init(resetAfterMilliseconds: Int32) throws {
        let (listener, port) = try BlockingLoopbackListener.open { listener in
            var small: Int32 = 4096  // inherited by the accepted socket: the window stays small
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        }
        self.port = port
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else {
            close(listener)
            throw POSIXError(.EMFILE)
        }
        self.stopWriter = descriptors[1]
        self.stopReader = descriptors[0]
        let stopReader = descriptors[0]
        let ended = self.ended
        let thread = Thread {
            Self.serve(listener: listener, stopReader: stopReader, resetAfterMilliseconds: resetAfterMilliseconds)
            ended.signal()
        }
        thread.start()
    }

    var url: String { "ws://127.0.0.1:\(self.port)/" }

    /// Resets the connection now if it is still open, and waits until the server's thread has ended.
    func stop() {
        var byte: UInt8 = 1
        _ = write(self.stopWriter, &byte, 1)
        self.ended.wait()
        close(self.stopWriter)
        close(self.stopReader)
    }

    private static func serve(listener: Int32, stopReader: Int32, resetAfterMilliseconds: Int32) {
        // Accept, or end when stopped first. A reconnecting client is then refused.
        var waits = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopReader, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&waits, 2, -1) > 0 && waits[1].revents == 0
        let connection = ready ? accept(listener, nil, nil) : -1
        close(listener)
        guard connection >= 0 else { return }
        defer {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)  // close with RST
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(connection)
        }
        var parser = HandshakeRequestParser()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var request: HandshakeRequest?
        while request == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            parser.append(buffer[..<count])
            do {
                request = try parser.parse()
            } catch {
                return
            }
        }
        guard let request else { return }
        let response = ServerHandshake.accept(request)
        _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // Never read again; reset after the delay, or when stopped.
        var stop = pollfd(fd: stopReader, events: Int16(POLLIN), revents: 0)
        _ = poll(&stop, 1, resetAfterMilliseconds)
    }
}
#endif
