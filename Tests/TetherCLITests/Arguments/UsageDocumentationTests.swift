import Foundation
import Testing
@testable import TetherCLI

/// docs/cli.md's synopsis names the same flags, command by command, as the usage `tether help COMMAND` prints, so
/// that neither gains or loses a flag without the other; the usage names only flags the parser takes; and every
/// `tether` command line the pages show uses flags its command takes.
@Suite struct UsageDocumentationTests {
    @Test func theSynopsisInDocsNamesEveryFlagOfEachCommandAndNoOther() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let synopsis = Self.synopsis(in: page)
        for (command, usage) in [("check", Usage.check), ("connect", Usage.connect), ("serve", Usage.serve)] {
            let documented = Self.flags(in: synopsis[command] ?? "")
            #expect(!documented.isEmpty, "docs/cli.md's synopsis has no `tether \(command)` line")
            #expect(documented == Self.flags(in: usage), "docs/cli.md and `tether help \(command)` differ")
        }
    }

    /// Every flag `tether help COMMAND` names is one the command's parser takes: a usage cannot document a flag
    /// the code does not have.
    @Test func everyFlagOfTheUsageIsOneTheParserTakes() {
        for (command, usage) in [("check", Usage.check), ("connect", Usage.connect), ("serve", Usage.serve)] {
            for flag in Self.flags(in: usage) {
                #expect(Self.accepts(command, flag), "`tether help \(command)` names \(flag), which it refuses")
            }
        }
    }

    /// Every `tether check|connect|serve ...` command line the README and the pages show, in code spans and code
    /// blocks, uses flags that command takes; every flag docs/cli.md names is one a command takes.
    @Test func everyCommandLineThePagesShowUsesFlagsTheParserTakes() throws {
        var refused: [String] = []
        for page in try Self.pages() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            for (command, flags) in Self.commandLines(in: text) {
                for flag in flags where !Self.accepts(command, flag) {
                    refused.append("\(page): tether \(command) \(flag)")
                }
            }
            guard page == "docs/cli.md" else { continue }
            for flag in Self.flags(in: text) where !["check", "connect", "serve"].contains(where: {
                Self.accepts($0, flag)
            }) && flag != "--version" {
                refused.append("\(page): \(flag)")
            }
        }
        #expect(refused.isEmpty, "flags the parser does not take:\n\(refused.joined(separator: "\n"))")
    }

    @Test func commandLinesAreFoundInSpansAndBlocks() {
        let page = """
            Run `tether connect ws://h/ --count 1 --bogus` or `swift run tether check --json`,
            not `tether-bench --x`.
            ```sh
            $ echo hi | .build/debug/tether connect ws://h/ --quiet | jq --raw-output
            tether serve [--port N] [--echo | --no-echo]
                         [--deflate]
            ```
            """
        let lines = Self.commandLines(in: page)
        #expect(lines.map(\.command) == ["connect", "check", "connect", "serve"])
        #expect(lines.map(\.flags) == [
            ["--count", "--bogus"], ["--json"], ["--quiet"], ["--port", "--echo", "--no-echo", "--deflate"],
        ])
        #expect(Self.accepts("connect", "--count") && !Self.accepts("connect", "--bogus"))
        #expect(!Self.accepts("serve", "--count") && Self.accepts("check", "--json"))
    }

    /// Whether `tether COMMAND FLAG` is a flag the parser knows (whatever it then says of its value or the rest).
    static func accepts(_ command: String, _ flag: String) -> Bool {
        do {
            _ = try CommandLineParser.parse([command, flag])
            return true
        } catch {
            if case .unknownFlag = error { return false }
            return true
        }
    }

    /// The `tether check|connect|serve` command lines of a page, with their flags: in each code span, and in each
    /// line of a fenced block (with the indented lines after it, as a synopsis continues), up to a `|` that is not
    /// inside brackets. `swift run tether`, a path to the binary and a `$ ` prompt are taken as `tether`.
    static func commandLines(in page: String) -> [(command: String, flags: [String])] {
        var found: [(command: String, flags: [String])] = []
        var fenced = false
        var continuing = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                fenced.toggle()
                continuing = false
                continue
            }
            if fenced {
                if continuing, line.first == " ", var last = found.popLast() {
                    last.flags += Self.flags(inCommand: line[...])
                    found.append(last)
                    continue
                }
                let before = found.count
                found += Self.invocations(in: line[...])
                continuing = found.count > before
            } else {
                for span in line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                where !span.offset.isMultiple(of: 2) {
                    found += Self.invocations(in: span.element)
                }
            }
        }
        return found
    }

    /// The `tether COMMAND ...` invocations in `text`.
    private static func invocations(in text: Substring) -> [(command: String, flags: [String])] {
        text.matches(of: /(?:^|[\s(\/])tether (check|connect|serve)\b/).map { match in
            (String(match.output.1), Self.flags(inCommand: text[match.range.upperBound...]))
        }
    }

    /// The flags of one command line: up to a `|` outside brackets (a pipe into another command).
    private static func flags(inCommand text: Substring) -> [String] {
        var depth = 0
        var end = text.endIndex
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth -= 1
            case "|" where depth == 0:
                end = index
            default: continue
            }
            if end != text.endIndex { break }
        }
        var flags: [String] = []
        for match in text[..<end].matches(of: /(?:^|[\s\[])(--[a-z][a-z0-9-]*)/) {
            flags.append(String(match.output.1))
        }
        return flags
    }

    /// README.md and every page under docs/, as paths from the root.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func flagsAreReadFromBothShapes() {
        let block = "tether check [--out DIR] [--json]\ntether serve [--host A]\n             [--tls-cert F --tls-key F]"
        let synopsis = Self.synopsis(in: "# x\n\n```sh\n$ tether serve\n```\n\n```\n" + block + "\n```\n")
        #expect(Self.flags(in: synopsis["check"] ?? "") == ["--out", "--json"])
        #expect(Self.flags(in: synopsis["serve"] ?? "") == ["--host", "--tls-cert", "--tls-key"])
        #expect(Self.flags(in: "  --no-path-monitor     do not watch (--count, --duration)") == [
            "--no-path-monitor", "--count", "--duration",
        ])
    }

    /// The text of each command in the page's first plain fenced block (opened with a bare ```), continuation
    /// lines included.
    static func synopsis(in page: String) -> [String: String] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        var open: Int?
        var fenced = false
        for (index, line) in lines.enumerated() where line.hasPrefix("```") {
            if !fenced, line == "```" {
                open = index
                break
            }
            fenced.toggle()
        }
        guard let open, let close = lines[(open + 1)...].firstIndex(of: "```") else { return [:] }
        var commands: [String: String] = [:]
        var current: String?
        for line in lines[(open + 1)..<close] {
            if line.hasPrefix("tether ") {
                current = line.dropFirst("tether ".count).prefix { $0 != " " }.description
            }
            if let command = current { commands[command, default: ""] += line + "\n" }
        }
        return commands
    }

    /// Every `--flag` in `text`.
    static func flags(in text: String) -> Set<String> {
        var flags = Set<String>()
        var rest = Substring(text)
        while let start = rest.range(of: "--") {
            let name = rest[start.upperBound...].prefix { $0.isLowercase || $0 == "-" }
            if let first = name.first, first.isLowercase { flags.insert("--" + name) }
            rest = rest[start.upperBound...].dropFirst(name.count)
        }
        return flags
    }
}
