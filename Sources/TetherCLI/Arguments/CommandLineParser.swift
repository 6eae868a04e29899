import Foundation
import Tether
import TetherWire
import TetherTestServer

/// Turns `tether`'s arguments into a `Command`, or a typed `ArgumentError` (never a crash).
package enum CommandLineParser {
    /// - Parameter arguments: the arguments after the program name.
    package static func parse(_ arguments: [String]) throws(ArgumentError) -> Command {
        guard let command = arguments.first else { throw .missingCommand }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "check": return try self.parseCheck(rest)
        case "connect": return try self.parseConnect(rest)
        case "serve": return try self.parseServe(rest)
        case "help": return .help(rest.first)
        case "--help", "-h": return .help(nil)
        case "--version", "version": return .version
        default: throw .unknownCommand(command)
        }
    }

    /// The value of `flag`, which must name a scenario of `tether check`'s catalog.
    private static func scenarioName(_ cursor: inout ArgumentCursor, for flag: String) throws(ArgumentError) -> String {
        let name = try cursor.value(for: flag)
        guard CheckCatalog.names.contains(name) else { throw .unknownScenario(name, known: CheckCatalog.names) }
        return name
    }

    static func parseCheck(_ arguments: [String]) throws(ArgumentError) -> Command {
        var options = CheckOptions()
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            switch argument {
            case .flag("--out"):
                options.outputDirectory = try cursor.value(for: "--out")
                if options.outputDirectory.isEmpty {
                    throw .invalidValue(flag: "--out", value: "", expected: "a directory")
                }
            case .flag("--only"):
                options.only = try Self.scenarioName(&cursor, for: "--only")
            case .flag("--skip"):
                options.skip.append(try Self.scenarioName(&cursor, for: "--skip"))
            case .flag("--json"):
                try cursor.noValue(for: "--json")
                options.json = true
            case .flag("--help"):
                return .help("check")
            case .flag(let flag):
                throw .unknownFlag(flag, command: "check")
            case .positional(let value):
                throw .unexpectedArgument(value)
            }
        }
        return .check(options)
    }

    static func parseConnect(_ arguments: [String]) throws(ArgumentError) -> Command {
        var url: URL?
        var headers: [HeaderOption] = []
        var protocols: [String] = []
        var scratch = ConnectOptions(url: URL(fileURLWithPath: "/"))
        var proxyGiven = false
        var proxyEnvironmentGiven = false
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            switch argument {
            case .flag("--header"):
                headers.append(try self.header(cursor.value(for: "--header")))
            case .flag("--protocol"):
                let name = try cursor.value(for: "--protocol")
                guard HTTPToken.isValid(name) else {
                    throw .invalidValue(
                        flag: "--protocol", value: name, expected: "a token (letters, digits, -._~...)")
                }
                protocols.append(name)
            case .flag("--interval"):
                scratch.interval = try cursor.integer(
                    for: "--interval", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--timeout"):
                scratch.timeout = try cursor.integer(for: "--timeout", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--connect-timeout"):
                scratch.connectTimeout = try cursor.integer(
                    for: "--connect-timeout", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--backoff-base"):
                scratch.backoffBase = try cursor.integer(
                    for: "--backoff-base", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--backoff-cap"):
                scratch.backoffCap = try cursor.integer(
                    for: "--backoff-cap", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--max-message"):
                scratch.maximumMessageSize = try cursor.integer(
                    for: "--max-message", in: 125...(1 << 40), expected: "a byte count of at least 125")
            case .flag("--count"):
                scratch.count = try cursor.integer(for: "--count", in: 1...Int.max, expected: "a count > 0")
            case .flag("--duration"):
                scratch.duration = try cursor.integer(
                    for: "--duration", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--quiet"):
                try cursor.noValue(for: "--quiet")
                scratch.quiet = true
            case .flag("--events"):
                let format = try cursor.value(for: "--events")
                guard format == "jsonl" else {
                    throw .invalidValue(flag: "--events", value: format, expected: "'jsonl'")
                }
                scratch.eventsJSONL = true
            case .flag("--events-text"):
                try cursor.noValue(for: "--events-text")
                scratch.eventsText = true
            case .flag("--no-path-monitor"):
                try cursor.noValue(for: "--no-path-monitor")
                scratch.pathMonitor = false
            case .flag("--raw"):
                try cursor.noValue(for: "--raw")
                scratch.raw = true
            case .flag("--no-stdin"):
                try cursor.noValue(for: "--no-stdin")
                scratch.readsStdin = false
            case .flag("--ca-file"):
                scratch.caFiles.append(try cursor.value(for: "--ca-file"))
            case .flag("--pin"):
                let pin = try cursor.value(for: "--pin")
                guard TLSOptions.isWellFormed(pin: pin) else {
                    throw .invalidValue(
                        flag: "--pin", value: pin, expected: "sha256/ and the base64 of a SHA-256 digest")
                }
                scratch.pins.append(pin)
            case .flag("--insecure"):
                try cursor.noValue(for: "--insecure")
                scratch.insecure = true
            case .flag("--deflate"):
                try cursor.noValue(for: "--deflate")
                scratch.deflate = scratch.deflate ?? .standard
            case .flag("--deflate-window"):
                let bits = try cursor.integer(
                    for: "--deflate-window", in: PerMessageDeflateOffer.windowBitsRange, expected: "window bits 9...15")
                var deflate = scratch.deflate ?? .standard
                deflate.offers[0].clientMaxWindowBits = .limit(bits)
                deflate.offers[0].serverMaxWindowBits = bits
                scratch.deflate = deflate
            case .flag("--deflate-no-context-takeover"):
                try cursor.noValue(for: "--deflate-no-context-takeover")
                var deflate = scratch.deflate ?? .standard
                deflate.offers[0].clientNoContextTakeover = true
                deflate.offers[0].serverNoContextTakeover = true
                scratch.deflate = deflate
            case .flag("--interface-switch"):
                switch try cursor.value(for: "--interface-switch") {
                case "make-before-break": scratch.interfaceSwitch = .makeBeforeBreak()
                case "probe": scratch.interfaceSwitch = .probe
                case let other:
                    throw .invalidValue(
                        flag: "--interface-switch", value: other, expected: "'make-before-break' or 'probe'")
                }
            case .flag("--cert"):
                scratch.clientCertificate = try cursor.value(for: "--cert")
            case .flag("--key"):
                scratch.clientKey = try cursor.value(for: "--key")
            case .flag("--key-passphrase-env"):
                let name = try cursor.value(for: "--key-passphrase-env")
                guard !name.isEmpty, !name.contains("=") else {
                    throw .invalidValue(
                        flag: "--key-passphrase-env", value: name, expected: "the name of an environment variable")
                }
                scratch.keyPassphraseVariable = name
            case .flag("--queue"):
                try cursor.noValue(for: "--queue")
                scratch.queue = true
            case .flag("--greeting-file"):
                scratch.greetingFile = try cursor.value(for: "--greeting-file")
            case .flag("--acknowledged"):
                try cursor.noValue(for: "--acknowledged")
                scratch.acknowledged = true
            case .flag("--feed"):
                scratch.feeds.append(try self.streamName(cursor.value(for: "--feed"), flag: "--feed"))
            case .flag("--proxy"):
                scratch.proxy = try self.proxy(cursor.value(for: "--proxy"))
                proxyGiven = true
            case .flag("--proxy-env"):
                try cursor.noValue(for: "--proxy-env")
                scratch.proxy = .environment
                proxyEnvironmentGiven = true
            case .flag("--help"):
                return .help("connect")
            case .flag(let flag):
                throw .unknownFlag(flag, command: "connect")
            case .positional(let value):
                guard url == nil else { throw .unexpectedArgument(value) }
                url = try self.webSocketURL(value)
            }
        }
        guard let url else { throw .missingArgument("URL (for example ws://127.0.0.1:8080/)") }
        if scratch.eventsText, !scratch.eventsJSONL { throw .requires(flag: "--events-text", other: "--events jsonl") }
        if proxyGiven, proxyEnvironmentGiven { throw .conflicting("--proxy", "--proxy-env") }
        if scratch.acknowledged, scratch.queue { throw .conflicting("--acknowledged", "--queue") }
        if scratch.clientCertificate != nil, scratch.clientKey == nil {
            throw .requires(flag: "--cert", other: "--key")
        }
        if scratch.clientKey != nil, scratch.clientCertificate == nil {
            throw .requires(flag: "--key", other: "--cert")
        }
        if scratch.keyPassphraseVariable != nil, scratch.clientKey == nil {
            throw .requires(flag: "--key-passphrase-env", other: "--key")
        }
        guard scratch.backoffBase <= scratch.backoffCap else {
            throw .invalidValue(
                flag: "--backoff-cap", value: String(scratch.backoffCap),
                expected: "at least --backoff-base (\(scratch.backoffBase))")
        }
        scratch.url = url
        scratch.headers = headers
        scratch.protocols = protocols
        return .connect(scratch)
    }

    static func parseServe(_ arguments: [String]) throws(ArgumentError) -> Command {
        var options = ServeOptions()
        var sizeGiven = false
        var everyGiven = false
        var echoGiven = false
        var noEchoGiven = false
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            switch argument {
            case .flag("--port"):
                options.port = try cursor.integer(for: "--port", in: 0...65_535, expected: "a port 0...65535")
            case .flag("--host"):
                options.host = try cursor.value(for: "--host")
                guard !options.host.isEmpty else {
                    throw .invalidValue(flag: "--host", value: "", expected: "a numeric address")
                }
            case .flag("--pong-delay"):
                options.pongDelay = try cursor.integer(
                    for: "--pong-delay", in: .delayMilliseconds, expected: "milliseconds >= 0")
            case .flag("--no-pong"):
                try cursor.noValue(for: "--no-pong")
                options.noPong = true
            case .flag("--close-after"):
                options.closeAfter = try cursor.integer(
                    for: "--close-after", in: .delayMilliseconds, expected: "milliseconds >= 0")
            case .flag("--close-code"):
                let code = try cursor.integer(
                    for: "--close-code", in: 1000...4999, expected: "a close code 1000-1003, 1007-1014 or 3000-4999")
                guard let wireCode = UInt16(exactly: code), CloseCode.isValidOnWire(wireCode) else {
                    throw .invalidNumber(
                        flag: "--close-code", value: String(code),
                        expected: "a close code 1000-1003, 1007-1014 or 3000-4999")
                }
                options.closeCode = UInt16(code)
            case .flag("--close-reason"):
                options.closeReason = try cursor.value(for: "--close-reason")
                guard options.closeReason.utf8.count <= 123 else {
                    throw .invalidValue(
                        flag: "--close-reason", value: options.closeReason, expected: "at most 123 bytes of UTF-8")
                }
            case .flag("--reject"):
                options.reject = try cursor.integer(
                    for: "--reject", in: 200...999, expected: "an HTTP status 200...999")
            case .flag("--retry-after"):
                options.retryAfter = try cursor.integer(
                    for: "--retry-after", in: 0...86_400, expected: "seconds >= 0")
            case .flag("--send"):
                options.send = try cursor.integer(for: "--send", in: 1...Int.max, expected: "a count > 0")
            case .flag("--every"):
                options.every = try cursor.integer(
                    for: "--every", in: .delayMilliseconds, expected: "milliseconds >= 0")
                everyGiven = true
            case .flag("--size"):
                options.size = try cursor.integer(for: "--size", in: 0...(16 << 20), expected: "bytes 0...16777216")
                sizeGiven = true
            case .flag("--echo"):
                try cursor.noValue(for: "--echo")
                options.echo = true
                echoGiven = true
            case .flag("--no-echo"):
                try cursor.noValue(for: "--no-echo")
                options.echo = false
                noEchoGiven = true
            case .flag("--deflate"):
                try cursor.noValue(for: "--deflate")
                options.deflate = true
            case .flag("--broadcast-every"):
                options.broadcastEvery = try cursor.integer(
                    for: "--broadcast-every", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--delivery"):
                try cursor.noValue(for: "--delivery")
                options.delivery = true
            case .flag("--feed"):
                options.feeds.append(try self.streamName(cursor.value(for: "--feed"), flag: "--feed"))
                options.delivery = true
            case .flag("--feed-every"):
                options.feedEvery = try cursor.integer(
                    for: "--feed-every", in: .milliseconds, expected: "milliseconds > 0")
                options.delivery = true
            case .flag("--feed-retained"):
                options.feedRetained = try cursor.integer(
                    for: "--feed-retained", in: 0...100_000, expected: "a count 0...100000")
                options.delivery = true
            case .flag("--ping-every"):
                options.pingEvery = try cursor.integer(
                    for: "--ping-every", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--handshake-timeout"):
                options.handshakeTimeout = try cursor.integer(
                    for: "--handshake-timeout", in: .milliseconds, expected: "milliseconds > 0")
            case .flag("--max-handshaking"):
                options.maxHandshaking = try cursor.integer(
                    for: "--max-handshaking", in: 1...1_000_000, expected: "a count 1...1000000")
            case .flag("--tls-cert"):
                options.tlsCertificate = try cursor.value(for: "--tls-cert")
            case .flag("--tls-key"):
                options.tlsKey = try cursor.value(for: "--tls-key")
            case .flag("--require-client-cert"):
                options.clientCertificateAuthorities = try cursor.value(for: "--require-client-cert")
            case .flag("--record-limit"):
                options.recordLimit = try cursor.integer(
                    for: "--record-limit", in: 0...10_000_000, expected: "a count 0...10000000")
            case .flag("--help"):
                return .help("serve")
            case .flag(let flag):
                throw .unknownFlag(flag, command: "serve")
            case .positional(let value):
                throw .unexpectedArgument(value)
            }
        }
        if options.noPong, options.pongDelay != nil { throw .conflicting("--no-pong", "--pong-delay") }
        if echoGiven, noEchoGiven { throw .conflicting("--echo", "--no-echo") }
        if options.closeCode != nil, options.closeAfter == nil {
            throw .requires(flag: "--close-code", other: "--close-after")
        }
        if !options.closeReason.isEmpty, options.closeAfter == nil {
            throw .requires(flag: "--close-reason", other: "--close-after")
        }
        if options.retryAfter != nil, options.reject == nil {
            throw .requires(flag: "--retry-after", other: "--reject")
        }
        if everyGiven, options.send == nil { throw .requires(flag: "--every", other: "--send") }
        if options.tlsCertificate != nil, options.tlsKey == nil {
            throw .requires(flag: "--tls-cert", other: "--tls-key")
        }
        if options.tlsKey != nil, options.tlsCertificate == nil {
            throw .requires(flag: "--tls-key", other: "--tls-cert")
        }
        if options.clientCertificateAuthorities != nil, options.tlsCertificate == nil {
            throw .requires(flag: "--require-client-cert", other: "--tls-cert")
        }
        if sizeGiven, options.send == nil { throw .requires(flag: "--size", other: "--send") }
        return .serve(options)
    }

    /// A `ws://` or `wss://` URL with a host, and a port in 1...65535 when it names one.
    static func webSocketURL(_ text: String) throws(ArgumentError) -> URL {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw .invalidURL(self.redacted(text))
        }
        guard scheme == "ws" || scheme == "wss" else { throw .unsupportedScheme(scheme) }
        guard let host = components.host, !host.isEmpty, let url = components.url else {
            throw .invalidURL(self.redacted(text))
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw .invalidPort(self.redacted(text), port: port)
        }
        return url
    }

    /// `--proxy`'s value: `http://[USER:PASSWORD@]HOST:PORT`, or `socks5://` / `socks5h://` with the same parts
    /// (user info percent-decoded, a trailing `/` allowed). Anything else (another scheme, no scheme, no port, a
    /// path or query) is refused, shown without its user info.
    static func proxy(_ text: String) throws(ArgumentError) -> ProxyConfiguration {
        let scheme = URLComponents(string: text)?.scheme?.lowercased()
        guard let components = URLComponents(string: text), let port = components.port, (1...65_535).contains(port),
            components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil
        else { throw self.badProxy(text) }
        switch scheme {
        case "http"?:
            if let proxy = HTTPProxy(url: text) { return .http(proxy) }
        case "socks5"?, "socks5h"?:
            if let proxy = SOCKSProxy(url: text) { return .socks(proxy) }
        default:
            break
        }
        throw self.badProxy(text)
    }

    private static func badProxy(_ text: String) -> ArgumentError {
        .invalidValue(
            flag: "--proxy", value: self.redacted(text),
            expected: "an http://, socks5:// or socks5h://[USER:PASSWORD@]HOST:PORT URL")
    }

    /// A URL as typed, cut before its query or fragment and without user info: error messages never show a token
    /// or a password. Everything from the scheme (or the start) to the last `@` is hidden, even where that `@` is
    /// not where a URL's user info ends (a password with a `/` or `?` in it): better too little shown than a secret.
    static func redacted(_ text: String) -> String {
        var shown = text
        let authority = shown.range(of: "://")?.upperBound ?? shown.startIndex
        if let at = shown[authority...].lastIndex(of: "@") { shown.removeSubrange(authority...at) }
        return String(shown.prefix { $0 != "?" && $0 != "#" })
    }

    /// A stream name of the delivery protocol: 1...64 bytes, no spaces.
    static func streamName(_ name: String, flag: String) throws(ArgumentError) -> String {
        guard !name.isEmpty, name.utf8.count <= 64, !name.contains(where: \.isWhitespace) else {
            throw .invalidValue(flag: flag, value: name, expected: "a stream name of 1...64 bytes without spaces")
        }
        return name
    }

    static func header(_ text: String) throws(ArgumentError) -> HeaderOption {
        guard let colon = text.firstIndex(of: ":") else { throw .invalidHeader(text) }
        let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        guard HTTPToken.isValid(name), !value.contains("\r"), !value.contains("\n") else {
            throw .invalidHeader(name.isEmpty ? text : name + ":...")
        }
        return HeaderOption(name: name, value: value)
    }


}
