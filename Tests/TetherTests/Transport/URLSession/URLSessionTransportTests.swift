import Foundation
import Testing
import TetherCore
@testable import Tether
import TetherTesting

@Suite struct URLSessionTransportTests {
    #if os(Linux)
    /// Debian's libcurl has no WebSocket support: the task must fail through the normal terminal event,
    /// with a reason that says so, instead of hanging (its `receive` never completes) or crashing.
    @Test func linuxWithoutLibcurlWebSocketsEndsAsUnsupportedConnectFailure() async throws {
        let connection = URLSessionTransport().connect(TransportRequest(url: URL(string: "ws://127.0.0.1:9/socket")!))
        var events: [TransportEvent] = []
        for await event in connection.events {
            events.append(event)
        }
        guard case .ended(let end)? = events.last else {
            Issue.record("no terminal event: \(events)")
            return
        }
        #expect(end == .connectFailed(.unsupported))
        #expect(events.filter { if case .ended = $0 { true } else { false } }.count == 1)
    }

    @Test func clientOnUnsupportedTransportFailsVisiblyAndStopsRetrying() async throws {
        let configuration = WebSocketClient.Configuration(
            url: URL(string: "ws://127.0.0.1:9/socket")!, transport: URLSessionTransport()
        )
        let client = try WebSocketClient(configuration: configuration)
        let probe = EventRecorder(client.events)
        await client.start()
        let failed = await probe.state(.failed)
        #expect(failed?.failure == .connectFailed(.unsupported))
        await client.stop()
    }
    #endif

    @Test func nonWebSocketSchemeEndsAsUnsupportedWithoutTouchingTheNetwork() async throws {
        let connection = URLSessionTransport().connect(TransportRequest(url: URL(string: "http://127.0.0.1:9/")!))
        var iterator = connection.events.makeAsyncIterator()
        let event = await iterator.next()
        guard case .ended(.connectFailed(.unsupported, _))? = event else {
            Issue.record("expected an unsupported connect failure, got \(String(describing: event))")
            return
        }
        #expect(await iterator.next() == nil)
    }

    @Test func sendBeforeOpenThrowsNotOpen() async throws {
        let connection = URLSessionTransport().connect(TransportRequest(url: URL(string: "http://127.0.0.1:9/")!))
        await #expect(throws: WebSocketSendError.notOpen) {
            try await connection.send(.text("x"))
        }
    }

    @Test func platformErrorsMapToConnectFailures() {
        #expect(URLSessionConnection.end(for: URLError(.cannotConnectToHost), opened: false)
            == .connectFailed(.refused))
        #expect(URLSessionConnection.end(for: URLError(.timedOut), opened: false) == .connectFailed(.timedOut))
        #expect(URLSessionConnection.end(for: URLError(.cannotFindHost), opened: false)
            == .connectFailed(.nameResolution))
        #expect(URLSessionConnection.end(for: URLError(.networkConnectionLost), opened: true) == .receiveFailed)
    }

    @Test func aClientCertificateRefusalIsAPermanentTLSFailure() {
        #expect(URLSessionConnection.end(for: URLError(.clientCertificateRequired), opened: false)
            == .tlsFailed(detail: "client certificate required", permanent: true))
        #expect(URLSessionConnection.end(for: URLError(.clientCertificateRejected), opened: false)
            == .tlsFailed(detail: "client certificate rejected", permanent: true))
    }
}
