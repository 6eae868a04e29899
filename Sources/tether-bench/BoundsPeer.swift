// The other end of `tether-bench bounds`: a hidden mode of the same binary, run in a child process so that what it
// buffers never counts in the measured process's RSS.
//
//   tether-bench bounds --peer KIND --count N --size B --seconds S --stall-ms M
//
// It speaks WebSocket over raw blocking/non-blocking sockets (Glibc), with hand-built frames, and none of Tether's
// engine: a server kind listens on 127.0.0.1 (any port), accepts one connection and answers its upgrade; a client
// kind connects once it is told the port. Then it floods N frames as fast as the peer takes them, until all are
// written, the peer has taken nothing for M ms (it was pushed back), or S seconds have passed.
//
// Kinds:
//   ping-flood-server     sends N pings with B bytes of payload, never reads (bounds scenario 1)
//   message-flood-server  sends N binary messages of B bytes, never reads (scenario 2)
//   deaf-server           completes the handshake, then neither reads nor writes (scenario 3)
//   echo-flood-client     sends N masked binary messages of B bytes, never reads (scenario 4)
//   ping-flood-client     sends N masked pings of B bytes and reads (and drops) whatever comes back (scenario 5)
//
// Lines on stdout (`word key=value ...`), for the parent:
//   port port=P                       a server kind listens on P
//   open                              the handshake is complete
//   attacked frames=F bytes=B stalled=0|1 gone=0|1   the flood is over (stalled: the peer took nothing for M ms;
//                                     gone: the peer closed or reset the connection)
//   left                              the connection was reset (after `leave`)
// Lines on stdin: `connect P` (client kinds: connect to 127.0.0.1:P), `leave` (reset the connection: SO_LINGER 0,
// close). At the end of stdin (the parent is done, or gone) it exits at once; an alarm ends it in any case.
#if os(Linux)
import Glibc
import TetherPOSIX
import TetherWire

enum BoundsPeer {
    enum Kind: String, CaseIterable {
        case pingFloodServer = "ping-flood-server"
        case messageFloodServer = "message-flood-server"
        case deafServer = "deaf-server"
        case echoFloodClient = "echo-flood-client"
        case pingFloodClient = "ping-flood-client"

        var isServer: Bool {
            switch self {
            case .pingFloodServer, .messageFloodServer, .deafServer: true
            case .echoFloodClient, .pingFloodClient: false
            }
        }

        /// Whether it reads what the measured side sends while flooding and holding.
        var readsBack: Bool { self == .pingFloodClient }
    }

    struct Options {
        var kind = Kind.deafServer
        var count = 0
        var size = 0
        var seconds = 10.0
        var stallMilliseconds = 500
    }

    static func run(_ arguments: [String]) -> Never {
        guard let options = self.parse(arguments) else {
            self.diagnose(
                "usage: tether-bench bounds --peer KIND [--count N] [--size B] [--seconds S] [--stall-ms M]; "
                    + "KIND: " + Kind.allCases.map(\.rawValue).joined(separator: ", "))
            exit(2)
        }
        self.prepareSignals()
        // Whatever happens, the child ends: the flood is bounded by `seconds`, the rest by a minute.
        alarm(UInt32(options.seconds.rounded(.up)) + 60)
        var control = Control()
        let socket = options.kind.isServer ? self.serve(&control) : self.connect(&control)
        self.say("open")
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        let result: FloodResult
        if options.kind == .deafServer {
            result = FloodResult()
        } else {
            result = self.flood(socket, options, control: &control)
        }
        self.say(
            "attacked frames=\(result.frames) bytes=\(result.bytes) stalled=\(result.stalled ? 1 : 0) "
                + "gone=\(result.gone ? 1 : 0)")
        // Hold the connection (draining it if this kind reads) until told to leave.
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        // -1 once the peer is gone: an ended socket would make every poll return at once.
        var watched = result.gone ? -1 : socket
        while !control.leave {
            let events = options.kind.readsBack ? Int16(POLLIN) : 0
            let ready = self.poll(watched, events: events, milliseconds: 1_000, control: &control)
            if ready & Int16(POLLIN) != 0, !self.drain(socket, into: &scratch) { watched = -1 }
            if ready & Int16(POLLERR | POLLHUP) != 0 { watched = -1 }
        }
        var abort = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(socket, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close(socket)
        self.say("left")
        while true {
            _ = self.poll(-1, events: 0, milliseconds: 1_000, control: &control)  // until stdin ends
        }
    }

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        guard let kindName = arguments.first, let kind = Kind(rawValue: kindName) else { return nil }
        options.kind = kind
        var index = 1
        while index + 1 < arguments.count {
            let value = arguments[index + 1]
            switch arguments[index] {
            case "--count":
                guard let count = Int(value), count >= 0 else { return nil }
                options.count = count
            case "--size":
                guard let size = Int(value), size >= 0 else { return nil }
                options.size = size
            case "--seconds":
                guard let seconds = Double(value), seconds > 0 else { return nil }
                options.seconds = seconds
            case "--stall-ms":
                guard let stall = Int(value), stall > 0 else { return nil }
                options.stallMilliseconds = stall
            default: return nil
            }
            index += 2
        }
        guard index == arguments.count else { return nil }
        if kind == .pingFloodServer || kind == .pingFloodClient, options.size > 125 { return nil }
        return options
    }

    /// SIGTERM, SIGINT and SIGALRM end the child even if it inherited them blocked (Foundation's `Process`, launched
    /// from a pool thread, can pass its blocked mask on); a write to a closed socket fails instead of killing it.
    static func prepareSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGTERM, SIGINT, SIGALRM, SIGPIPE] { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
        signal(SIGALRM, SIG_DFL)
        signal(SIGPIPE, SIG_IGN)
    }

    // MARK: - Control from the parent

    /// What the parent said on stdin.
    struct Control {
        var pending: [UInt8] = []
        var leave = false
        var connectPort: Int?

        /// Reads what stdin has; exits at its end.
        mutating func readInput() {
            var chunk = [UInt8](repeating: 0, count: 256)
            let count = read(STDIN_FILENO, &chunk, chunk.count)
            guard count > 0 else { exit(0) }  // the parent closed the pipe or exited
            self.pending.append(contentsOf: chunk[..<count])
            while let newline = self.pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: self.pending[..<newline], as: UTF8.self)
                self.pending.removeSubrange(...newline)
                let words = line.split(separator: " ")
                switch (words.first, words.count) {
                case ("leave"?, 1): self.leave = true
                case ("connect"?, 2): self.connectPort = Int(words[1])
                default: BoundsPeer.diagnose("bounds peer: unknown command '\(line)'")
                }
            }
        }
    }

    /// Waits up to `milliseconds` for `events` on `socket` (none: -1 or 0 events) while reading stdin; returns the
    /// socket's `revents` (0 on timeout, or when only stdin was ready).
    static func poll(_ socket: Int32, events: Int16, milliseconds: Int, control: inout Control) -> Int16 {
        var fds = [
            pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: events, revents: 0),
        ]
        let count = Glibc.poll(&fds, nfds_t(socket >= 0 ? 2 : 1), Int32(max(0, milliseconds)))
        guard count > 0 else { return 0 }
        if fds[0].revents != 0 { control.readInput() }
        return socket >= 0 ? fds[1].revents : 0
    }

    // MARK: - Handshakes

    /// Listens on 127.0.0.1, reports the port, accepts one connection and completes its upgrade.
    static func serve(_ control: inout Control) -> Int32 {
        let listener: Int32
        do throws(SocketError) {
            let opened = try BlockingLoopbackListener.open()
            listener = opened.descriptor
            self.say("port port=\(opened.port)")
        } catch {
            self.fail("cannot listen on 127.0.0.1: \(error)")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while self.poll(listener, events: Int16(POLLIN), milliseconds: 100, control: &control) == 0 {
            if ContinuousClock.now > deadline { self.fail("no client connected") }
        }
        let socket = accept(listener, nil, nil)
        close(listener)
        guard socket >= 0 else { self.fail("accept failed: errno \(errno)") }
        var parser = HandshakeRequestParser()
        parser.append(Array(self.readHead(socket, control: &control).utf8))
        let request: HandshakeRequest
        do {
            guard let parsed = try parser.parse() else { self.fail("an incomplete upgrade request") }
            request = parsed
        } catch {
            self.fail("invalid upgrade request: \(error)")
        }
        self.writeAll(socket, ServerHandshake.accept(request))
        return socket
    }

    /// Waits for `connect PORT`, connects to 127.0.0.1:PORT and completes the upgrade.
    static func connect(_ control: inout Control) -> Int32 {
        let deadline = ContinuousClock.now + .seconds(30)
        while control.connectPort == nil {
            _ = self.poll(-1, events: 0, milliseconds: 100, control: &control)
            if ContinuousClock.now > deadline { self.fail("no connect command") }
        }
        let port = control.connectPort!
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                Glibc.connect(socket, generic, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard socket >= 0, connected else { self.fail("cannot connect to 127.0.0.1:\(port): errno \(errno)") }
        self.writeAll(
            socket,
            Array(("GET /bounds HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        let response = self.readHead(socket, control: &control)
        guard response.hasPrefix("HTTP/1.1 101") else { self.fail("the server refused the upgrade") }
        return socket
    }

    /// Reads an HTTP head (up to the blank line) from a blocking socket, within 10 s. What follows it is dropped:
    /// neither side sends a frame before it has seen the other's head.
    static func readHead(_ socket: Int32, control: inout Control) -> String {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let end = self.headEnd(head) { return String(decoding: head[..<end], as: UTF8.self) }
            guard ContinuousClock.now < deadline, head.count < 16 << 10 else { self.fail("no complete HTTP head") }
            guard self.poll(socket, events: Int16(POLLIN), milliseconds: 100, control: &control) != 0 else { continue }
            let count = recv(socket, &chunk, chunk.count, 0)
            guard count > 0 else { self.fail("the connection ended in the handshake") }
            head.append(contentsOf: chunk[..<count])
        }
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index..<(index + 4)].elementsEqual("\r\n\r\n".utf8) {
            return index + 4
        }
        return nil
    }

    static func writeAll(_ socket: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { rest in
                send(socket, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { self.fail("write failed: errno \(errno)") }
            offset += count
        }
    }

    // MARK: - Flooding

    struct FloodResult {
        var frames = 0
        var bytes = 0
        var stalled = false
        var gone = false
    }

    /// Writes `options.count` frames of the kind's flood, as fast as the socket takes them, until all are written,
    /// nothing was taken for `stallMilliseconds`, `seconds` have passed, or the peer is gone.
    static func flood(_ socket: Int32, _ options: Options, control: inout Control) -> FloodResult {
        let frame = self.frame(for: options.kind, size: options.size)
        // Whole frames, about 64 KiB of them, written round and round.
        let chunk = Array([[UInt8]](repeating: frame, count: max(1, (64 << 10) / frame.count)).joined())
        let total = frame.count * options.count
        var result = FloodResult()
        var offset = 0
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(options.seconds * 1000))
        let stall = Duration.milliseconds(options.stallMilliseconds)
        var lastProgress = clock.now
        flooding: while result.bytes < total {
            let now = clock.now
            guard now < deadline else { break }
            guard now - lastProgress < stall else {
                result.stalled = true
                break
            }
            let wait = min(deadline - now, stall - (now - lastProgress))
            let milliseconds = max(1, Int((wait / .milliseconds(1)).rounded(.up)))
            let events = Int16(POLLOUT) | (options.kind.readsBack ? Int16(POLLIN) : 0)
            let ready = self.poll(socket, events: events, milliseconds: milliseconds, control: &control)
            if ready & Int16(POLLIN) != 0, !self.drain(socket, into: &scratch) {
                result.gone = true
                break
            }
            if ready & Int16(POLLERR | POLLHUP) != 0 {
                result.gone = true
                break
            }
            guard ready & Int16(POLLOUT) != 0 else { continue }
            for _ in 0..<64 where result.bytes < total {
                let length = min(chunk.count - offset, total - result.bytes)
                let count = chunk.withUnsafeBytes { bytes in
                    send(socket, bytes.baseAddress! + offset, length, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if count > 0 {
                    result.bytes += count
                    offset = (offset + count) % chunk.count
                    lastProgress = clock.now
                    continue
                }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                result.gone = true
                break flooding
            }
        }
        result.frames = result.bytes / frame.count
        return result
    }

    /// Reads and drops what the socket has (a bounded number of reads); false at its end or on an error.
    static func drain(_ socket: Int32, into scratch: inout [UInt8]) -> Bool {
        for _ in 0..<64 {
            let count = recv(socket, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return true }
            return false
        }
        return true
    }

    /// One frame of the kind's flood: unmasked from a server, masked (with a fixed key) from a client.
    static func frame(for kind: Kind, size: Int) -> [UInt8] {
        let payload = [UInt8](repeating: UInt8(ascii: "*"), count: size)
        switch kind {
        case .pingFloodServer: return self.encode(opcode: 0x9, payload: payload, masked: false)
        case .messageFloodServer: return self.encode(opcode: 0x2, payload: payload, masked: false)
        case .echoFloodClient: return self.encode(opcode: 0x2, payload: payload, masked: true)
        case .pingFloodClient: return self.encode(opcode: 0x9, payload: payload, masked: true)
        case .deafServer: return []
        }
    }

    /// A final frame (RFC 6455 §5.2), written out by hand so that the attacker owes nothing to the code it attacks.
    static func encode(opcode: UInt8, payload: [UInt8], masked: Bool) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126:
            frame.append(maskBit | UInt8(payload.count))
        case ..<65_536:
            frame.append(maskBit | 126)
            frame.append(contentsOf: [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)])
        default:
            frame.append(maskBit | 127)
            frame.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) })
        }
        guard masked else { return frame + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame.append(contentsOf: key)
        frame.append(contentsOf: payload.enumerated().map { $0.element ^ key[$0.offset & 3] })
        return frame
    }

    // MARK: - Output

    /// One line on stdout, written at once (stdout is a pipe).
    static func say(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { bytes in _ = write(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
    }

    static func diagnose(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    static func fail(_ message: String) -> Never {
        self.diagnose("bounds peer: \(message)")
        exit(1)
    }
}
#endif
