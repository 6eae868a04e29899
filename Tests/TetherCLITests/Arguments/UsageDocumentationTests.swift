import Foundation
import Testing
@testable import TetherCLI

/// docs/cli.md's synopsis names the same flags, command by command, as the usage `tether help COMMAND` prints, so
/// that neither gains or loses a flag without the other.
@Suite struct UsageDocumentationTests {
    @Test func theSynopsisInDocsNamesEveryFlagOfEachCommandAndNoOther() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let synopsis = Self.synopsis(in: page)
        for (command, usage) in [("check", Usage.check), ("connect", Usage.connect), ("serve", Usage.serve)] {
            let documented = Self.flags(in: synopsis[command] ?? "")
            #expect(!documented.isEmpty, "docs/cli.md's synopsis has no `tether \(command)` line")
            #expect(documented == Self.flags(in: usage), "docs/cli.md and `tether help \(command)` differ")
        }
    }

    @Test func flagsAreReadFromBothShapes() {
        let block = "tether check [--out DIR] [--json]\ntether serve [--host A]\n             [--tls-cert F --tls-key F]"
        let synopsis = Self.synopsis(in: "# x\n\n```\n" + block + "\n```\n")
        #expect(Self.flags(in: synopsis["check"] ?? "") == ["--out", "--json"])
        #expect(Self.flags(in: synopsis["serve"] ?? "") == ["--host", "--tls-cert", "--tls-key"])
        #expect(Self.flags(in: "  --no-path-monitor     do not watch (--count, --duration)") == [
            "--no-path-monitor", "--count", "--duration",
        ])
    }

    /// The text of each command in the page's first fenced block, continuation lines included.
    static func synopsis(in page: String) -> [String: String] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        guard let open = lines.firstIndex(of: "```"), let close = lines[(open + 1)...].firstIndex(of: "```") else {
            return [:]
        }
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
