#if os(Linux)
import Foundation
import Testing
import Tether
import TetherCore
import TetherPOSIX
import TetherTesting
import TetherTestServer

/// Tether's client, with its default transport (`SocketTransport` on Linux), against a server it did not write:
/// Python's `websockets` (`peer.py serve`, one process per test), asserted on what the client reports.
// Enabled only when scripts/interop.sh has set up Python's websockets: a plain `swift test` needs no PyPI
// packages, and reports these as skipped rather than passing without a peer.
@Suite(.serialized, .enabled(if: PythonPeer.isConfigured, PythonPeer.notConfigured))
struct ClientInteropTests {
    enum Kind: String, CaseIterable, Sendable {
        case text, binary
    }

    @Test(arguments: Kind.allCases)
    func messagesFromOneByteToEightMebibytesComeBackByteIdentical(kind: Kind) async throws {
        try await withPythonServer(path: "/echo") { client, recorder in
            #expect(await recorder.state(.open) != nil)
            for size in InteropPayload.sizes {
                let sent: WebSocketMessage = switch kind {
                case .text: .text(InteropPayload.text(bytes: size))
                case .binary: .binary(InteropPayload.binary(bytes: size))
                }
                try await client.send(sent)
                let echoed = await recorder.message(timeout: .seconds(30))
                // Compared apart from #expect, which would print both megabyte payloads on a mismatch.
                let identical = echoed == sent
                #expect(identical, "\(kind) \(size) B came back as \(echoed.map { "\($0)" } ?? "nothing")")
            }
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func compressedMessagesComeBackByteIdenticalFromWebsocketsWithAndWithoutContextTakeover(
        noContextTakeover: Bool
    ) async throws {
        let serverArguments = ["--deflate"] + (noContextTakeover ? ["--no-context-takeover"] : [])
        try await withPythonServer(
            path: "/deflate-echo", serverArguments: serverArguments, compression: .standard
        ) { client, recorder in
            // websockets says first what it negotiated: its own and our no_context_takeover.
            let flag = noContextTakeover ? "True" : "False"
            #expect(await recorder.message() == .text("permessage-deflate no_context_takeover=\(flag),\(flag)"))
            for size in InteropPayload.sizes where size <= 1 << 20 {
                let messages: [WebSocketMessage] = [
                    .text(InteropPayload.text(bytes: size)), .binary(InteropPayload.binary(bytes: size)),
                ]
                for sent in messages {
                    try await client.send(sent)
                    let echoed = await recorder.message(timeout: .seconds(30))
                    let identical = echoed == sent
                    #expect(identical, "\(size) B came back as \(echoed.map { "\($0)".prefix(80) } ?? "nothing")")
                }
            }
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        }
    }

    /// What an app does with a compressed connection: eight tasks send 400 JSON texts each at once, each awaiting its
    /// own sends, to websockets' echo with context takeover (its default), which inflates each message against the
    /// ones before it on the wire. Every echo comes back exactly as it was sent, each task's in its order: frames
    /// reach the wire in the order they were compressed.
    @Test func concurrentCompressedSendersGetEveryEchoBackExactlyFromWebsocketsWithContextTakeover() async throws {
        try await withPythonServer(
            path: "/deflate-echo", serverArguments: ["--deflate"], compression: .standard
        ) { client, recorder in
            #expect(await recorder.message() == .text("permessage-deflate no_context_takeover=False,False"))
            let senders = ConcurrentSenders(tasks: 8, count: 400)
            try await senders.send { try await client.send(.text($0)) }
            await senders.expectEchoes {
                guard case .text(let text)? = await recorder.message(timeout: .seconds(30)) else { return nil }
                return text
            }
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        }
    }

    @Test func websocketsAnswersTheHeartbeatAndTheConnectionStaysOpen() async throws {
        try await withPythonServer(
            path: "/echo", interval: .milliseconds(50), timeout: .seconds(1)
        ) { client, recorder in
            for _ in 0..<3 {
                let pong = try #require(await recorder.record(.pong))
                #expect(pong.generation == 1 && (pong.rtt ?? -1) >= 0)
            }
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
            let state = await client.state
            #expect(state.phase == .open && state.generation == 1 && state.lastRTT != nil)
        }
    }

    @Test func serverPingsAreAnsweredWithPongs() async throws {
        // The server sends three pings 20 ms apart, awaits each pong, then reports how many it saw.
        try await withPythonServer(path: "/ping?every=20&count=3") { _, recorder in
            let report = await recorder.message()
            #expect(report == .text("pongs 3"))
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        }
    }

    @Test(arguments: [UInt16(1000), 1001, 1011, 4000])
    func serverCloseIsReportedWithItsCode(code: UInt16) async throws {
        try await withPythonServer(path: "/close?code=\(code)&reason=interop%20\(code)") { _, recorder in
            let closed = try #require(await recorder.record(.closed))
            #expect(closed.generation == 1)
            #expect(closed.reason == .peerClosed(code: code))
            #expect(closed.code == Int(code))
            let change = await recorder.next { event in
                if case .stateChanged(_, let cause) = event { return cause != nil }
                return false
            }
            guard case .stateChanged(let state, let cause)? = change else {
                Issue.record("no state change with a cause after the close")
                return
            }
            #expect(cause == .peerClosed(code: code))
            // None of these codes says "do not come back": the client backs off and retries.
            #expect(state.phase == .waiting && state.failure == nil)
        }
    }

    @Test func serverThatStopsReadingIsClosedAsPongTimeoutAtIntervalPlusTimeout() async throws {
        let interval = 100
        let timeout = 300
        try await withPythonServer(
            path: "/deaf", interval: .milliseconds(interval), timeout: .milliseconds(timeout)
        ) { _, recorder in
            let opened = try #require(await recorder.record(.opened))
            let ping = try #require(await recorder.record(.ping))
            let closed = try #require(await recorder.record(.closed))
            #expect(closed.generation == opened.generation)
            #expect(closed.reason == .pongTimeout)
            #expect(closed.code == 1001)
            // Never early: the deadline is the ping plus the timeout, the ping one interval after the open.
            #expect(ping.time - opened.time >= interval)
            #expect(closed.time - ping.time >= timeout)
            let late = closed.time - (opened.time + interval + timeout)
            #expect(late >= 0 && late <= 200, "closed \(late) ms after interval + timeout")
            let change = await recorder.next { event in
                if case .stateChanged(_, let cause) = event { return cause != nil }
                return false
            }
            guard case .stateChanged(_, let cause)? = change else {
                Issue.record("no state change with a cause after the pong timeout")
                return
            }
            #expect(cause == .pongTimeout)
        }
    }

    // MARK: Harness

    /// Starts `peer.py serve` and a client for `path` on it, runs `body`, then stops the client and ends the
    /// peer, also when `body` throws.
    @Test func overTLSMessagesComeBackByteIdenticalAndTheHeartbeatIsAnswered() async throws {
        try await withPythonServer(path: "/echo", interval: .milliseconds(50), timeout: .seconds(1), tls: true) {
            client, recorder in
            #expect(await recorder.state(.open) != nil)
            for size in [1, 125, 65_536, 1 << 20] {
                for sent in [WebSocketMessage.text(InteropPayload.text(bytes: size)),
                             .binary(InteropPayload.binary(bytes: size))] {
                    try await client.send(sent)
                    let echoed = await recorder.message(timeout: .seconds(30))
                    let identical = echoed == sent
                    #expect(identical, "\(size) B over TLS came back as \(echoed.map { "\($0)" } ?? "nothing")")
                }
            }
            let pong = try #require(await recorder.record(.pong))
            #expect(pong.generation == 1 && (pong.rtt ?? -1) >= 0)
            #expect(recorder.records.filter { $0.kind == .closed }.isEmpty)
        }
    }

    private func withPythonServer(
        path: String,
        interval: Duration = .seconds(1),
        timeout: Duration = .seconds(5),
        tls: Bool = false,
        serverArguments: [String] = [],
        compression: CompressionOptions? = nil,
        _ body: (WebSocketClient, EventRecorder) async throws -> Void
    ) async throws {
        var arguments: [String] = serverArguments
        var options = TLSOptions()
        if tls {
            // A throw-away CA; websockets serves the certificate it issued for 127.0.0.1, the client trusts the CA.
            let authority = TestCertificateAuthority()
            let certificate = authority.issue(hosts: ["127.0.0.1"])
            let directory = NSTemporaryDirectory() + "tether-interop-tls-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(certificate.certificatePEM).write(to: URL(fileURLWithPath: directory + "/server.pem"))
            try Data(certificate.privateKeyPEM).write(to: URL(fileURLWithPath: directory + "/server.key"))
            arguments += ["--tls-cert", directory + "/server.pem", "--tls-key", directory + "/server.key"]
            options.additionalTrustRoots = [.pem(Data(authority.certificate.certificatePEM))]
        }
        let (peer, port) = try await PythonPeer.server(arguments)
        defer { peer.stop() }
        var configuration = WebSocketConfiguration(
            url: try #require(URL(string: "\(tls ? "wss" : "ws")://127.0.0.1:\(port)\(path)")),
            heartbeatInterval: interval,
            heartbeatTimeout: timeout,
            backoff: BackoffPolicy(base: .milliseconds(40), factor: 2, cap: .milliseconds(400), jitterPercent: 50),
            closeTimeout: .milliseconds(300),
            pathMonitoring: .none
        )
        configuration.tls = options
        configuration.compression = compression
        let client = try WebSocketClient(configuration: configuration, randomSeed: 1)
        let recorder = EventRecorder(client.events)
        await client.start()
        do {
            try await body(client, recorder)
        } catch {
            await client.stop()
            throw error
        }
        await client.stop()
    }
}
#endif
