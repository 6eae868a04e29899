import Foundation
import Testing
import Tether
@testable import TetherCLI

@Suite struct CommandLineParserTests {
    // MARK: check

    @Test func checkWithoutArgumentsWritesToTheCurrentDirectory() throws {
        #expect(try CommandLineParser.parse(["check"]) == .check(CheckOptions()))
    }

    @Test func checkTakesOutOnlyAndJSON() throws {
        let command = try CommandLineParser.parse(["check", "--out", "/tmp/r", "--only=stop-open", "--json"])
        #expect(command == .check(CheckOptions(outputDirectory: "/tmp/r", only: "stop-open", json: true)))
    }

    @Test func checkSkipsEveryScenarioNamedAndRefusesAnUnknownOne() throws {
        let command = try CommandLineParser.parse(["check", "--skip", "ping-flood", "--skip=slow-consumer"])
        #expect(command == .check(CheckOptions(skip: ["ping-flood", "slow-consumer"])))
        #expect(throws: ArgumentError.unknownScenario("flood", known: CheckCatalog.names)) {
            try CommandLineParser.parse(["check", "--skip", "flood"])
        }
        #expect(throws: ArgumentError.missingValue(flag: "--skip")) { try CommandLineParser.parse(["check", "--skip"]) }
    }

    @Test func checkWithAnUnknownScenarioListsTheKnownOnes() {
        #expect(throws: ArgumentError.unknownScenario("nope", known: CheckCatalog.names)) {
            try CommandLineParser.parse(["check", "--only", "nope"])
        }
        #expect(ArgumentError.unknownScenario("nope", known: CheckCatalog.names).description.contains("path-loss"))
    }

    @Test func checkRefusesUnknownFlagsPositionalsAndFlagValues() {
        #expect(throws: ArgumentError.unknownFlag("--frob", command: "check")) {
            try CommandLineParser.parse(["check", "--frob"])
        }
        #expect(throws: ArgumentError.unexpectedArgument("extra")) { try CommandLineParser.parse(["check", "extra"]) }
        #expect(throws: ArgumentError.missingValue(flag: "--out")) { try CommandLineParser.parse(["check", "--out"]) }
        #expect(throws: ArgumentError.invalidValue(flag: "--json", value: "yes", expected: "no value")) {
            try CommandLineParser.parse(["check", "--json=yes"])
        }
    }

    // MARK: connect

    @Test func connectTakesEveryFlag() throws {
        let command = try CommandLineParser.parse([
            "connect", "ws://127.0.0.1:9000/feed?token=t", "--header", "Authorization: Bearer x",
            "--header", "X-Trace:1", "--protocol", "chat", "--protocol", "v2", "--interval", "200",
            "--timeout", "100", "--connect-timeout", "700", "--backoff-base", "50", "--backoff-cap", "800", "--max-message", "4096",
            "--count", "5", "--duration", "3000", "--quiet", "--events", "jsonl", "--no-path-monitor", "--raw",
            "--no-stdin",
        ])
        var expected = ConnectOptions(url: URL(string: "ws://127.0.0.1:9000/feed?token=t")!)
        expected.headers = [
            HeaderOption(name: "Authorization", value: "Bearer x"), HeaderOption(name: "X-Trace", value: "1"),
        ]
        expected.protocols = ["chat", "v2"]
        expected.interval = 200
        expected.timeout = 100
        expected.connectTimeout = 700
        expected.backoffBase = 50
        expected.backoffCap = 800
        expected.maximumMessageSize = 4096
        expected.count = 5
        expected.duration = 3000
        expected.quiet = true
        expected.eventsJSONL = true
        expected.pathMonitor = false
        expected.raw = true
        expected.readsStdin = false
        #expect(command == .connect(expected))
    }

    @Test func connectDefaultsMatchTheClient() throws {
        guard case .connect(let options) = try CommandLineParser.parse(["connect", "wss://example.com/"]) else {
            Issue.record("expected connect")
            return
        }
        #expect(options.interval == 15_000 && options.timeout == 5_000 && options.connectTimeout == 10_000)
        #expect(options.backoffBase == 1_000 && options.backoffCap == 60_000)
        #expect(options.pathMonitor && !options.eventsJSONL && options.count == nil)
        #expect(options.readsStdin && !options.raw)  // stdin is sent, received text is escaped
    }

    @Test func connectRawAndNoStdinTakeNoValue() {
        #expect(throws: ArgumentError.invalidValue(flag: "--raw", value: "yes", expected: "no value")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--raw=yes"])
        }
        #expect(throws: ArgumentError.invalidValue(flag: "--no-stdin", value: "1", expected: "no value")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--no-stdin=1"])
        }
    }

    @Test func connectRefusesBadURLs() {
        #expect(throws: ArgumentError.missingArgument("URL (for example ws://127.0.0.1:8080/)")) {
            try CommandLineParser.parse(["connect"])
        }
        #expect(throws: ArgumentError.unsupportedScheme("http")) {
            try CommandLineParser.parse(["connect", "http://example.com/"])
        }
        #expect(throws: ArgumentError.invalidURL("ws://")) { try CommandLineParser.parse(["connect", "ws://"]) }
        #expect(throws: ArgumentError.invalidURL("not a url")) {
            try CommandLineParser.parse(["connect", "not a url"])
        }
        #expect(throws: ArgumentError.unexpectedArgument("ws://b/")) {
            try CommandLineParser.parse(["connect", "ws://a/", "ws://b/"])
        }
    }

    @Test func connectRefusesNegativeZeroAndMissingNumbers() {
        #expect(throws: ArgumentError.invalidNumber(flag: "--count", value: "-1", expected: "a count > 0")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--count", "-1"])
        }
        #expect(throws: ArgumentError.invalidNumber(flag: "--interval", value: "0", expected: "milliseconds > 0")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--interval", "0"])
        }
        #expect(throws: ArgumentError.invalidNumber(flag: "--timeout", value: "soon", expected: "milliseconds > 0")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--timeout", "soon"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--connect-timeout", value: "0", expected: "milliseconds > 0")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--connect-timeout", "0"])
        }
        #expect(throws: ArgumentError.missingValue(flag: "--count")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--count", "--quiet"])
        }
        #expect(throws: ArgumentError.missingValue(flag: "--duration")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--duration"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--max-message", value: "10", expected: "a byte count of at least 125")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--max-message", "10"])
        }
    }

    @Test func connectTakesAnInterfaceSwitchPolicyByNameAndRefusesAnyOther() throws {
        let url = URL(string: "ws://a/")!
        var expected = ConnectOptions(url: url)
        #expect(try CommandLineParser.parse(["connect", "ws://a/"]) == .connect(expected))  // the client's default
        expected.interfaceSwitch = .makeBeforeBreak(drain: InterfaceSwitchPolicy.defaultDrain)
        #expect(try CommandLineParser.parse(["connect", "ws://a/", "--interface-switch", "make-before-break"])
            == .connect(expected))
        expected.interfaceSwitch = .probe
        #expect(try CommandLineParser.parse(["connect", "ws://a/", "--interface-switch", "probe"]) == .connect(expected))
        #expect(throws: ArgumentError.invalidValue(
            flag: "--interface-switch", value: "break-before-make", expected: "'make-before-break' or 'probe'")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--interface-switch", "break-before-make"])
        }
    }

    @Test func connectRefusesBadHeadersProtocolsEventsAndBackoff() {
        #expect(throws: ArgumentError.invalidHeader("NoColon")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--header", "NoColon"])
        }
        #expect(throws: ArgumentError.invalidHeader("Bad Name:...")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--header", "Bad Name: secret"])
        }
        #expect(throws: ArgumentError.invalidValue(
            flag: "--protocol", value: "a b", expected: "a token (letters, digits, -._~...)")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--protocol", "a b"])
        }
        #expect(throws: ArgumentError.invalidValue(flag: "--events", value: "xml", expected: "'jsonl'")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--events", "xml"])
        }
        #expect(throws: ArgumentError.invalidValue(
            flag: "--backoff-cap", value: "10", expected: "at least --backoff-base (5000)")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--backoff-base", "5000", "--backoff-cap", "10"])
        }
        #expect(throws: ArgumentError.unknownFlag("-x", command: "connect")) {
            try CommandLineParser.parse(["connect", "ws://a/", "-x"])
        }
    }

    @Test func aBadURLErrorShowsNoQueryOrUserInfo() {
        #expect(throws: ArgumentError.invalidURL("ws://:80/p")) {
            try CommandLineParser.parse(["connect", "ws://user:pw@:80/p?token=s3cret"])
        }
    }

    @Test func connectProxyTakesAnHTTPURLWithOptionalCredentialsAndNoProxyConnectsDirectly() throws {
        func proxy(_ flags: [String]) throws -> ProxyConfiguration? {
            guard case .connect(let options) = try CommandLineParser.parse(["connect", "ws://a/"] + flags) else {
                Issue.record("expected connect")
                return nil
            }
            return options.proxy
        }
        #expect(try proxy([]) == nil)  // neither flag: the client's default
        #expect(try proxy(["--proxy", "http://proxy.corp:3128"]) == .http(HTTPProxy(host: "proxy.corp", port: 3128)))
        let alice = HTTPProxy.Credentials(user: "alice", password: "s3cret")
        #expect(try proxy(["--proxy=http://alice:s%33cret@10.0.0.1:8080/"])
            == .http(HTTPProxy(host: "10.0.0.1", port: 8080, credentials: alice)))
        #expect(try proxy(["--proxy", "HTTP://[::1]:3128"]) == .http(HTTPProxy(host: "::1", port: 3128)))
        #expect(try proxy(["--proxy-env"]) == .environment)
        #expect(try proxy(["--proxy", "socks5h://alice:s3cret@127.0.0.1:1080"])
            == .socks(SOCKSProxy(host: "127.0.0.1", port: 1080, credentials: alice)))
        #expect(try proxy(["--proxy", "socks5://[::1]:9050"])
            == .socks(SOCKSProxy(host: "::1", port: 9050, proxyResolvesNames: false)))
    }

    @Test(arguments: [
        ("https://proxy.corp:443", "https://proxy.corp:443"),
        ("socks4://alice:s3cret@proxy.corp:1080", "socks4://proxy.corp:1080"),
        ("socks5h://alice:s3cret@proxy.corp", "socks5h://proxy.corp"),
        ("proxy.corp:3128", "proxy.corp:3128"),
        ("alice:s3cret@proxy.corp:3128", "proxy.corp:3128"),
        ("http://alice:s3cret@proxy.corp", "http://proxy.corp"),
        ("http://proxy.corp:0", "http://proxy.corp:0"),
        ("http://proxy.corp:65536", "http://proxy.corp:65536"),
        ("http://proxy.corp:3128/path", "http://proxy.corp:3128/path"),
        ("http://proxy.corp:3128?token=s3cret", "http://proxy.corp:3128"),
        ("http://:3128", "http://:3128"),
        ("http://alice:s3/cret@proxy.corp:3128", "http://proxy.corp:3128"),
        ("", ""),
    ])
    func connectRefusesAProxyThatIsNotHTTPHostPortWithoutShowingItsUserInfo(value: String, shown: String) {
        let refused = ArgumentError.invalidValue(
            flag: "--proxy", value: shown,
            expected: "an http://, socks5:// or socks5h://[USER:PASSWORD@]HOST:PORT URL")
        #expect(throws: refused) { try CommandLineParser.parse(["connect", "ws://a/", "--proxy", value]) }
        #expect(refused.description.contains("'--proxy'"))
        #expect(!refused.description.contains("s3cret") && !refused.description.contains("alice"))
    }

    @Test func connectProxyNeedsAValueAndExcludesNoProxy() {
        #expect(throws: ArgumentError.missingValue(flag: "--proxy")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--proxy"])
        }
        #expect(throws: ArgumentError.missingValue(flag: "--proxy")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--proxy", "--no-stdin"])
        }
        #expect(throws: ArgumentError.invalidValue(flag: "--proxy-env", value: "yes", expected: "no value")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--proxy-env=yes"])
        }
        for flags in [["--proxy", "http://p:3128", "--proxy-env"], ["--proxy-env", "--proxy=http://p:3128"]] {
            #expect(throws: ArgumentError.conflicting("--proxy", "--proxy-env"), "\(flags)") {
                try CommandLineParser.parse(["connect", "ws://a/"] + flags)
            }
        }
    }

    @Test func aHeaderErrorNeverEchoesTheValue() {
        do {
            _ = try CommandLineParser.parse(["connect", "ws://a/", "--header", "Bad Name: hunter2"])
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }

    // MARK: serve

    @Test func serveTakesEveryFlag() throws {
        let command = try CommandLineParser.parse([
            "serve", "--port", "9001", "--host", "::1", "--pong-delay", "200", "--close-after", "500",
            "--close-code", "4000", "--close-reason", "bye", "--reject", "503", "--retry-after", "2",
            "--send", "10", "--every", "5", "--size", "64", "--echo", "--ping-every", "100",
            "--broadcast-every", "40", "--handshake-timeout", "2500", "--max-handshaking", "16", "--record-limit", "0",
        ])
        var expected = ServeOptions()
        expected.port = 9001
        expected.host = "::1"
        expected.pongDelay = 200
        expected.closeAfter = 500
        expected.closeCode = 4000
        expected.closeReason = "bye"
        expected.reject = 503
        expected.retryAfter = 2
        expected.send = 10
        expected.every = 5
        expected.size = 64
        expected.echo = true
        expected.pingEvery = 100
        expected.broadcastEvery = 40
        expected.handshakeTimeout = 2500
        expected.maxHandshaking = 16
        expected.recordLimit = 0
        #expect(command == .serve(expected))
    }

    @Test func theDeliveryFlagsOfBothCommands() throws {
        guard case .connect(let connect) = try CommandLineParser.parse([
            "connect", "ws://a/", "--acknowledged", "--feed", "prices", "--feed", "news",
        ]) else {
            Issue.record("expected connect")
            return
        }
        #expect(connect.acknowledged && connect.feeds == ["prices", "news"])
        #expect(throws: ArgumentError.conflicting("--acknowledged", "--queue")) {
            try CommandLineParser.parse(["connect", "ws://a/", "--acknowledged", "--queue"])
        }
        for name in ["", "two words", String(repeating: "x", count: 65)] {
            #expect(throws: ArgumentError.self, "\(name)") {
                try CommandLineParser.parse(["connect", "ws://a/", "--feed", name])
            }
        }
        guard case .serve(let serve) = try CommandLineParser.parse([
            "serve", "--feed", "prices", "--feed-every", "20", "--feed-retained", "50",
        ]) else {
            Issue.record("expected serve")
            return
        }
        #expect(serve.delivery && serve.feeds == ["prices"] && serve.feedEvery == 20 && serve.feedRetained == 50)
        guard case .serve(let plain) = try CommandLineParser.parse(["serve", "--delivery"]) else { return }
        #expect(plain.delivery && plain.feeds.isEmpty && plain.feedEvery == 1_000)
        #expect(throws: ArgumentError.self) { try CommandLineParser.parse(["serve", "--feed-every", "0"]) }
        #expect(throws: ArgumentError.self) { try CommandLineParser.parse(["serve", "--feed-retained", "-1"]) }
    }

    @Test func serveRefusesContradictionsAndOrphans() {
        #expect(throws: ArgumentError.conflicting("--no-pong", "--pong-delay")) {
            try CommandLineParser.parse(["serve", "--no-pong", "--pong-delay", "5"])
        }
        #expect(throws: ArgumentError.requires(flag: "--close-code", other: "--close-after")) {
            try CommandLineParser.parse(["serve", "--close-code", "1000"])
        }
        #expect(throws: ArgumentError.requires(flag: "--close-reason", other: "--close-after")) {
            try CommandLineParser.parse(["serve", "--close-reason", "bye"])
        }
        #expect(throws: ArgumentError.requires(flag: "--retry-after", other: "--reject")) {
            try CommandLineParser.parse(["serve", "--retry-after", "1"])
        }
        #expect(throws: ArgumentError.requires(flag: "--every", other: "--send")) {
            try CommandLineParser.parse(["serve", "--every", "5"])
        }
        #expect(throws: ArgumentError.requires(flag: "--size", other: "--send")) {
            try CommandLineParser.parse(["serve", "--size", "5"])
        }
    }

    @Test func serveRefusesOutOfRangeValues() {
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--max-handshaking", value: "0", expected: "a count 1...1000000")) {
            try CommandLineParser.parse(["serve", "--max-handshaking", "0"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--handshake-timeout", value: "0", expected: "milliseconds > 0")) {
            try CommandLineParser.parse(["serve", "--handshake-timeout", "0"])
        }
        #expect(throws: ArgumentError.invalidNumber(flag: "--port", value: "70000", expected: "a port 0...65535")) {
            try CommandLineParser.parse(["serve", "--port", "70000"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--close-code", value: "1005", expected: "a close code 1000-1003, 1007-1014 or 3000-4999")) {
            try CommandLineParser.parse(["serve", "--close-after", "1", "--close-code", "1005"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--reject", value: "101", expected: "an HTTP status 200...999")) {
            try CommandLineParser.parse(["serve", "--reject", "101"])
        }
        #expect(throws: ArgumentError.invalidNumber(
            flag: "--pong-delay", value: "-5", expected: "milliseconds >= 0")) {
            try CommandLineParser.parse(["serve", "--pong-delay", "-5"])
        }
        let long = String(repeating: "x", count: 124)
        #expect(throws: ArgumentError.invalidValue(
            flag: "--close-reason", value: long, expected: "at most 123 bytes of UTF-8")) {
            try CommandLineParser.parse(["serve", "--close-after", "1", "--close-reason", long])
        }
    }

    // MARK: commands

    @Test func missingAndUnknownCommands() {
        #expect(throws: ArgumentError.missingCommand) { try CommandLineParser.parse([]) }
        #expect(throws: ArgumentError.unknownCommand("bogus")) { try CommandLineParser.parse(["bogus"]) }
    }

    @Test func helpForEachCommand() throws {
        #expect(try CommandLineParser.parse(["--help"]) == .help(nil))
        #expect(try CommandLineParser.parse(["help", "serve"]) == .help("serve"))
        #expect(try CommandLineParser.parse(["connect", "-h"]) == .help("connect"))
        #expect(try CommandLineParser.parse(["check", "--help"]) == .help("check"))
    }
}

@Suite struct TetherCommandTests {
    /// Every refused command line exits 2 with one line saying why and one pointing at the usage on stderr (the
    /// usage itself only with `help`), and writes nothing to stdout.
    @Test(arguments: [
        [], ["bogus"], ["check", "--only", "nope"], ["check", "--frob"], ["connect"], ["connect", "http://x/"],
        ["connect", "ws://a/", "--count", "-3"], ["connect", "ws://a/", "--interval"], ["serve", "--port", "x"],
        ["serve", "--no-pong", "--pong-delay", "1"], ["serve", "--close-code", "1000"],
        ["connect", "ws://a/", "--proxy", "socks4://p:1080"], ["connect", "ws://a/", "--proxy"],
        ["connect", "ws://a/", "--proxy", "http://p:3128", "--proxy-env"], ["connect", "ws://a:99999/"],
        ["connect", "ws://a/", "--events-text"], ["serve", "--echo", "--no-echo"], ["serve", "--port", "65536"],
    ])
    func badArgumentsExitTwoWithOneLineAndAHint(_ arguments: [String]) async {
        let captured = CapturedIO()
        let status = await TetherCommand.run(arguments, io: captured.io)
        #expect(status == 2)
        let lines = captured.error.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines.last == "", "\(captured.error)")  // two lines, each ended
        #expect(lines.first?.hasPrefix("tether: ") == true)
        #expect(lines.dropFirst().first?.hasPrefix("Run 'tether help") == true)
        #expect(!captured.error.contains("usage:"))
        #expect(captured.output.isEmpty)
    }

    /// The hint names the command's own help once the command is known, the list of commands otherwise.
    @Test func theHintNamesTheHelpThatAnswers() async {
        let serve = CapturedIO()
        _ = await TetherCommand.run(["serve", "--port", "x"], io: serve.io)
        #expect(serve.error == "tether: option '--port' needs a port 0...65535, got 'x'\n"
            + "Run 'tether help serve' for its options.\n")
        let unknown = CapturedIO()
        _ = await TetherCommand.run(["bogus"], io: unknown.io)
        #expect(unknown.error.hasSuffix("\nRun 'tether help' for the commands.\n"))
        let help = CapturedIO()
        #expect(await TetherCommand.run(["help", "serve"], io: help.io) == 0)
        #expect(help.output.contains("usage: tether serve"))
    }

    /// A URL's port is checked before anything connects: 99999 is a bad argument (exit 2), not a connect failure.
    @Test func aPortOutsideItsRangeIsABadURL() {
        #expect(throws: ArgumentError.invalidPort("ws://a:99999/", port: 99999)) {
            try CommandLineParser.parse(["connect", "ws://a:99999/"])
        }
        #expect(throws: ArgumentError.invalidPort("ws://a:0/", port: 0)) {
            try CommandLineParser.parse(["connect", "ws://a:0/"])
        }
        for bad in ["ws://a:x/", "ws://a b/"] {
            #expect(throws: ArgumentError.invalidURL(bad)) { try CommandLineParser.parse(["connect", bad]) }
        }
        #expect(throws: Never.self) { try CommandLineParser.parse(["connect", "ws://a:65535/"]) }
        #expect(throws: Never.self) { try CommandLineParser.parse(["connect", "wss://[::1]:1/"]) }
    }

    @Test func versionPrintsTheVersionOnStdout() async {
        for arguments in [["--version"], ["version"]] {
            let captured = CapturedIO()
            #expect(await TetherCommand.run(arguments, io: captured.io) == 0)
            #expect(captured.output == "tether \(Version.current)\n")
            #expect(captured.error.isEmpty)
        }
    }

    @Test func aRefusedProxyIsNamedOnStderrWithoutItsCredentials() async {
        let captured = CapturedIO()
        let status = await TetherCommand.run(
            ["connect", "ws://a/", "--proxy", "socks4://alice:s3cret@proxy.corp:1080"], io: captured.io)
        #expect(status == 2)
        #expect(captured.error.hasPrefix(
            "tether: option '--proxy' needs an http://, socks5:// or socks5h://[USER:PASSWORD@]HOST:PORT URL, "
                + "got 'socks4://proxy.corp:1080'"))
        #expect(!captured.error.contains("s3cret") && !captured.error.contains("alice"))
    }

    @Test func helpExitsZeroOnStdout() async {
        let captured = CapturedIO()
        #expect(await TetherCommand.run(["help", "connect"], io: captured.io) == 0)
        #expect(captured.output.contains("--events jsonl"))
        #expect(captured.output.contains("--raw") && captured.output.contains("--no-stdin"))
        #expect(captured.output.contains("--proxy URL") && captured.output.contains("--proxy-env"))
        #expect(captured.output.contains(#"ESC as \u{1B}"#))  // the escaped form is documented
        #expect(captured.error.isEmpty)
    }
}
