import Foundation
import Testing

/// The pages name only what the code has: every type a page names in backticks (`WebSocketConfiguration`,
/// `CloseReason.userStopped`, `TestServer(scenario:)`) is declared in the sources or the tests, or is one of the
/// platform's and other projects' names listed in `outside`; and a member named after one of the sources' types
/// (`.userStopped`) is declared in the sources. Renaming a type or a case without the pages fails here.
/// (`scripts/user-package.sh` compiles the examples and every `configuration.NAME` from outside, which also
/// proves them public; this test covers the prose.)
@Suite struct DocumentationNamesTests {
    /// Names the pages use that Tether does not declare: the standard library's, Foundation's, Apple's SDKs', C's
    /// and the projects the pages compare with.
    static let outside: Set<String> = [
        // The standard library, Foundation, Dispatch, Synchronization, Swift Testing.
        "Array", "AsyncSequence", "AsyncStream", "Clock", "ContinuousClock", "Data", "Date", "Duration", "Mirror",
        "Mutex", "Optional", "Sendable", "String", "Task", "TaskExecutor", "SerialExecutor", "URL", "Atomic",
        "DispatchSource", "ProcessInfo", "Thread", "Synchronization", "UInt16", "Int", "Bool", "Foundation",
        "FoundationNetworking", "Dispatch", "Observation", "XCTest", "Testing", "Glibc", "Darwin", "Package",
        "PackageDescription", "Type",
        // Apple's SDKs.
        "URLSession", "URLSessionWebSocketTask", "URLSessionConfiguration", "URLCredential", "URLSessionTaskDelegate",
        "NWPathMonitor", "NWPath", "NWInterface", "Network", "Security", "UIKit", "UIApplication",
        "UIApplicationBackgroundTasks", "SecPKCS12Import", "SecPolicyCreateSSL", "SecTrustCopyCertificateChain",
        "SecTrustEvaluateWithError", "SecTrustSetAnchorCertificatesOnly", "SecIdentity", "SecTrust",
        "NSURLAuthenticationMethodClientCertificate", "NSURLAuthenticationMethodServerTrust", "SwiftUI",
        "URLAuthenticationChallenge", "URLRequest", "URLResponse", "HTTPURLResponse", "URLError", "NotificationCenter",
        "OperationQueue", "CFString", "Logger",
        // HTTP header fields (RFC 9110).
        "Location", "Authorization", "Cookie",
        // OpenSSL, and ASN.1 structures of the standards.
        "SSL_read", "SSL_write", "RSAPublicKey", "SubjectPublicKeyInfo",
        // The targets of the app's package in the README's manifest, and those scripts/user-package.sh adds.
        "App", "AppTests", "SwiftLogAdapter", "Logging",
        // Other projects the pages compare with or model on.
        "HTTP1ConnectionStateMachine", "ConnectionStateMachine", "WebSocketFrameDecoder", "NIOWebSocket",
        "MockWebServer", "Starscream",
        // swift-log, which the logging page adapts to (`Logger` is its name and os's).
        "StreamLogHandler",
    ]

    /// The repository's root, from this file's place in it.
    static let root = DocumentationExampleTests.root

    /// Placeholders that name no file: the layout's patterns.
    static let filePatterns: Set<String> = ["Type.swift", "Type+Facet.swift"]

    /// Files of the reader's own package that the README names (its first program), not of this repository.
    static let readersFiles: Set<String> = ["Sources/Hello/main.swift"]

    /// Every file a page names in backticks exists: a path from the root (`scripts/user-package.sh`,
    /// `Sources/TetherCore/Session/CloseReason.swift`), or a Swift file's name (`IdleTransportReference.swift`) at
    /// the root or in `Sources/`, `Tests/` or `scripts/`.
    @Test func everyFileAPageNamesExists() throws {
        var swiftFiles = Set<String>()
        for folder in ["Sources", "Tests", "scripts"] {
            let files = FileManager.default.enumerator(atPath: Self.root.appendingPathComponent(folder).path)
            while let file = files?.nextObject() as? String {
                swiftFiles.insert(URL(fileURLWithPath: file).lastPathComponent)
            }
        }
        var missing: [String] = []
        for page in try DocumentationExampleTests.pages() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            for span in Self.codeSpans(in: text) {
                switch Self.fileName(span) {
                case .path(let path)?:
                    if Self.readersFiles.contains(path) { continue }
                    if !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path) {
                        missing.append("\(page): `\(span)`")
                    }
                case .swiftFile(let name)?:
                    let atRoot = FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(name).path)
                    if !swiftFiles.contains(name), !atRoot, !Self.filePatterns.contains(name) {
                        missing.append("\(page): `\(span)`")
                    }
                case nil:
                    continue
                }
            }
        }
        #expect(missing.isEmpty, "files the repository does not have:\n\(missing.joined(separator: "\n"))")
    }

    enum FileName: Equatable {
        case path(String)
        case swiftFile(String)
    }

    /// The file a span names: a path under one of the repository's folders (cut at a `#` anchor or a `:` line
    /// number), or a bare `NAME.swift`; nil for anything else or a path with a placeholder (`Sources/<Module>/`).
    static func fileName(_ span: String) -> FileName? {
        let folders = ["Sources/", "Tests/", "scripts/", "docs/", ".ci/", "Fuzz/"]
        if folders.contains(where: span.hasPrefix) {
            let path = String(span.prefix { $0 != "#" && $0 != ":" && $0 != " " })
            return path.contains(where: { "<>*{}".contains($0) }) ? nil : .path(path)
        }
        if span.wholeMatch(of: /[A-Za-z0-9_+-]+\.swift/) != nil { return .swiftFile(span) }
        return nil
    }

    @Test func everyTypeAPageNamesIsDeclared() throws {
        let declared = try Self.declarations()
        var unknown: [String] = []
        for page in try DocumentationExampleTests.pages() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            for span in Self.codeSpans(in: text) where Self.fileName(span) == nil {
                // A C header of a platform's SDK (`NSURLSession.h`) names a file there, not a type.
                if span.wholeMatch(of: /[A-Za-z0-9_]+\.h/) != nil { continue }
                guard let path = Self.namePath(span) else { continue }
                let type = path[0]
                if Self.outside.contains(type) { continue }
                guard declared.types.contains(type) || declared.modules.contains(type) else {
                    unknown.append("\(page): `\(span)` names \(type)")
                    continue
                }
                guard path.count > 1, declared.types.contains(type) else { continue }
                let member = path[1]
                let known = member.first!.isUppercase
                    ? declared.types.contains(member) : declared.has(member, on: type) || member == "init"
                if !known { unknown.append("\(page): `\(span)` names \(type).\(member)") }
            }
        }
        #expect(unknown.isEmpty, "names the sources do not declare:\n\(unknown.joined(separator: "\n"))")
    }

    /// The scan's own rules, on text of its own.
    @Test func spansAndDeclarationsAreReadAsSwiftSpellsThem() {
        let page = "A `CloseReason.userStopped` and `tether serve`, `Retry-After`, `CONNECT`,\n`TestServer(scenario:)`,\n"
            + "```swift\nlet x = `NotASpan`\n```\n`SessionPhase` ``a `b` c``"
        let spans = Self.codeSpans(in: page)
        #expect(spans == ["CloseReason.userStopped", "tether serve", "Retry-After", "CONNECT",
                          "TestServer(scenario:)", "SessionPhase", "a `b` c"])
        #expect(spans.compactMap(Self.namePath) == [
            ["CloseReason", "userStopped"], ["TestServer"], ["SessionPhase"],
        ])
        var found = Declarations()
        found.read("""
            public enum Phase: Sendable {
                case open, closed(code: Int), waiting
                public static let defaultDrain = 1 // let commented
                func reconnectNow() { switch x { case .y: let local = "{ let quoted" } }
            }
            extension Phase { var isOpen: Bool { true } }
            typealias Alias = Module.Phase
            let global = 1
            @dynamicMemberLookup struct Wrapper {
                subscript<Value>(dynamicMember setting: WritableKeyPath<Phase, Value>) -> Value { fatalError() }
            }
            """)
        #expect(found.types == ["Phase", "Alias", "Wrapper"])
        #expect(
            found.members["Phase"] == ["open", "closed", "waiting", "defaultDrain", "reconnectNow", "local", "isOpen"])
        #expect(found.members[""] == ["global"])
        #expect(found.has("open", on: "Alias") && !found.has("global", on: "Phase"))
        #expect(found.has("isOpen", on: "Wrapper") && !found.has("global", on: "Wrapper"))
        #expect(Self.fileName("scripts/user-package.sh") == .path("scripts/user-package.sh"))
        #expect(Self.fileName("docs/cli.md#tether-check") == .path("docs/cli.md"))
        #expect(Self.fileName("Sources/<Module>/") == nil)
        #expect(Self.fileName("CloseReason.swift") == .swiftFile("CloseReason.swift"))
        #expect(Self.fileName("CloseReason.userStopped") == nil)
    }

    struct Declarations {
        var types: Set<String> = []
        /// The members declared inside each type's body or an extension of it, by the type's name.
        var members: [String: Set<String>] = [:]
        /// `typealias A = B` (or `= Module.B`, or `B.C`): A's members are B's.
        var aliases: [String: String] = [:]
        /// A `@dynamicMemberLookup` type's `subscript(dynamicMember: ...KeyPath<B, ...>)`: B's members are its own too
        /// (`WebSocketConfiguration.heartbeatInterval` is `SessionConfiguration`'s).
        var forwards: [String: String] = [:]
        var modules: Set<String> = []

        /// Whether `member` is declared on `type` (or on what `type` is an alias of).
        func has(_ member: String, on type: String) -> Bool {
            var name = type
            for _ in 0..<4 {  // an alias of an alias, at most a few deep
                if self.members[name]?.contains(member) == true { return true }
                if let forwarded = self.forwards[name], self.has(member, on: forwarded) { return true }
                guard let target = self.aliases[name] else { return false }
                name = target
            }
            return false
        }

        /// The types and members `source` declares: `struct`, `enum`, `class`, `actor`, `protocol` and `typealias`
        /// names; `var`, `let`, `func` and enum `case` names (a `case` list too, not a `switch`'s `case .x:`), each
        /// under the innermost type or extension whose braces hold it. String literals and comments are skipped.
        mutating func read(_ source: String) {
            let opener = /\b(struct|enum|class|actor|protocol|extension)\s+([A-Z][A-Za-z0-9_.]*)/
            let alias = /\btypealias\s+([A-Z][A-Za-z0-9_]*)(?:<[^>]*>)?\s*=\s*([A-Za-z0-9_.]+)/
            let member = /\b(var|let|func)\s+([a-z_][A-Za-z0-9_]*)/
            let dynamicMember = /dynamicMember\s+[a-z_][A-Za-z0-9_]*:\s*(?:Writable)?KeyPath<([A-Z][A-Za-z0-9_]*)/
            var scopes: [(name: String, depth: Int)] = []
            var depth = 0
            var inMultilineString = false
            for rawLine in source.split(separator: "\n", omittingEmptySubsequences: false) {
                if rawLine.contains("\"\"\"") {
                    inMultilineString.toggle()
                    continue
                }
                if inMultilineString { continue }
                let line = Self.code(of: rawLine)
                var opened: String?
                for match in line.matches(of: opener) {
                    let name = String(match.output.2.split(separator: ".").last!)
                    if match.output.1 != "extension" { self.types.insert(name) }
                    opened = name
                }
                for match in line.matches(of: alias) {
                    self.types.insert(String(match.output.1))
                    self.aliases[String(match.output.1)] = String(match.output.2.split(separator: ".").last!)
                }
                // A one-line body (`extension T { var x: Int { 1 } }`) holds its own members.
                let owner = opened.flatMap { line.contains("{") ? $0 : nil } ?? scopes.last?.name ?? ""
                for match in line.matches(of: member) {
                    self.members[owner, default: []].insert(String(match.output.2))
                }
                for name in Self.caseNames(in: line) { self.members[owner, default: []].insert(name) }
                for match in line.matches(of: dynamicMember) { self.forwards[owner] = String(match.output.1) }
                for character in line {
                    if character == "{" {
                        depth += 1
                        if let name = opened {
                            scopes.append((name, depth))
                            opened = nil
                        }
                    } else if character == "}" {
                        if scopes.last?.depth == depth { scopes.removeLast() }
                        depth -= 1
                    }
                }
            }
        }

        /// The line without its string literals and its comment.
        static func code(of line: Substring) -> String {
            var code = ""
            var inString = false
            var escaped = false
            var previous: Character = " "
            for character in line {
                if inString {
                    if escaped {
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        inString = false
                    }
                } else if character == "\"" {
                    inString = true
                } else if character == "/", previous == "/" {
                    code.removeLast()
                    break
                } else {
                    code.append(character)
                }
                previous = character
            }
            return code
        }

        /// The names an enum `case` declaration line declares (`case open, closed(code: Int)`); none for a
        /// `switch`'s `case .x:` or `case let`.
        static func caseNames(in line: String) -> [String] {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("case "), let first = trimmed.dropFirst(5).first, first.isLetter,
                !trimmed.hasPrefix("case let "), !trimmed.hasPrefix("case var ")
            else { return [] }
            var names: [String] = []
            var depth = 0
            var piece = ""
            for character in trimmed.dropFirst(5) + "," {
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
                if character == ",", depth == 0 {
                    let name = piece.drop { $0 == " " }.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                    if !name.isEmpty { names.append(String(name)) }
                    piece = ""
                } else {
                    piece.append(character)
                }
            }
            return names
        }
    }

    /// Every declaration of `Sources/` and `Tests/`, and the targets of `Package.swift` (module names).
    static func declarations() throws -> Declarations {
        var found = Declarations()
        for folder in ["Sources", "Tests"] {
            let base = self.root.appendingPathComponent(folder)
            let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                found.read(try String(contentsOf: file, encoding: .utf8))
            }
        }
        let manifest = try String(contentsOf: self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for match in manifest.matches(of: /name: "([A-Za-z][A-Za-z0-9-]*)"/) {
            found.modules.insert(String(match.output.1))
        }
        return found
    }

    /// The inline code spans of a Markdown page, outside fenced blocks, with their backtick runs matched (a span
    /// opened with two backticks ends at the next two).
    static func codeSpans(in text: String) -> [String] {
        var spans: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                fenced.toggle()
                continue
            }
            guard !fenced else { continue }
            var rest = line[...]
            while let open = rest.firstIndex(of: "`") {
                let ticks = rest[open...].prefix { $0 == "`" }
                let body = rest[ticks.endIndex...]
                guard let close = body.range(of: String(ticks)) else { break }
                spans.append(body[..<close.lowerBound].trimmingCharacters(in: .whitespaces))
                rest = body[close.upperBound...]
            }
        }
        return spans
    }

    /// The names of a span that is a Swift name path (`Type`, `Type.member`, `Type.Nested.member`, with a call or
    /// generic arguments after it): the type, then its members. Nil for anything else, and for a first name without
    /// a lowercase letter (`CONNECT`, `SIOCINQ`).
    static func namePath(_ span: String) -> [String]? {
        guard let match = span.wholeMatch(of: /([A-Z][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)([(<].*)?/)
        else { return nil }
        let type = String(match.output.1)
        guard type.contains(where: \.isLowercase) else { return nil }
        let members = match.output.2.split(separator: ".").map(String.init)
        return [type] + members
    }
}
