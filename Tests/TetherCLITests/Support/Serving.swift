#if os(Linux)
import Synchronization
import Testing
@testable import TetherCLI

/// The options `tether serve ARGUMENTS` parses to.
func serveOptions(_ arguments: [String]) throws -> ServeOptions {
    guard case .serve(let options) = try CommandLineParser.parse(["serve"] + arguments) else {
        throw NotServe(arguments: arguments)
    }
    return options
}

/// The arguments parsed to another command than `serve`.
struct NotServe: Error {
    var arguments: [String]
}

/// Runs `tether serve` with `options` in process until `body` returns, passing it the URL served; then ends it as a
/// signal would and expects exit status 0. Returns what `serve` wrote and the URL.
@discardableResult
func serving(
    _ options: ServeOptions, _ body: (String) async throws -> Void
) async throws -> (served: CapturedIO, url: String) {
    let served = CapturedIO()
    let stop = StopSignal()
    let (urls, urlSink) = AsyncStream.makeStream(of: String.self)
    let serving = Task {
        await ServeCommand.run(options, io: served.io, started: { urlSink.yield($0) }, until: { await stop.wait() })
    }
    var iterator = urls.makeAsyncIterator()
    let url = try #require(await iterator.next())
    try await body(url)
    stop.raise()
    #expect(await serving.value == 0)
    return (served, url)
}

/// A one-shot signal a test raises to end `serve` (in place of SIGINT).
private final class StopSignal: Sendable {
    private let state = Mutex<(raised: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func raise() {
        let waiter = self.state.withLock { state in
            state.raised = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let raised = self.state.withLock { state in
                if !state.raised { state.waiter = continuation }
                return state.raised
            }
            if raised { continuation.resume() }
        }
    }
}
#endif
