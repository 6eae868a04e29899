import Foundation
import Testing

/// The examples of the pages that the tests run are the pages' own: the code between `// example begin: PAGE#NAME`
/// and `// example end` in the files of this folder runs as a test, and this suite checks that PAGE shows it as it
/// is. Several parts with the same name (the imports at the top of a file, then a function's body) make one block,
/// separated by an empty line; each part is shown unindented. Every Swift block of every page, run here or not, is
/// compiled from a package outside Tether by `scripts/user-package.sh` (docs/testing.md, "The examples in these
/// pages").
@Suite struct DocumentationExampleTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyExampleInTheTestsIsShownOnItsPage() throws {
        for example in try Self.examples() {
            let blocks = try Self.swiftBlocks(of: example.page)
            #expect(
                blocks.contains(example.text), "\(example.page) does not show \(example.label) as the test holds it"
            )
        }
    }

    /// The markers find an example even when the code around them changes.
    @Test func examplesAreReadFromTheirMarkers() {
        // Built from parts, so that this file's own scan does not take it for an example.
        let (begin, end) = ("// example " + "begin: ", "// example " + "end")
        let source = """
            import Tether
            \(begin)docs/x.md#a
            import Foundation
            \(end)
            func f() {
                \(begin)docs/x.md#a
                let x = 1
                    print(x)
                \(end)
            }
            """
        let examples = Self.examples(in: source)
        #expect(examples.map(\.label) == ["docs/x.md#a"])
        #expect(examples.first?.text == "import Foundation\n\nlet x = 1\n    print(x)")
        #expect(Self.swiftBlocks(in: "text\n```swift\nlet a = 1\n```\n```sh\nls\n```\n") == ["let a = 1"])
    }

    struct Example {
        var label: String
        var text: String
        var page: String { String(self.label.prefix { $0 != "#" }) }
    }

    /// README.md and every page under docs/, as paths from the root.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: self.root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    static func swiftBlocks(of page: String) throws -> [String] {
        self.swiftBlocks(in: try String(contentsOf: self.root.appendingPathComponent(page), encoding: .utf8))
    }

    /// The contents of each ```swift fence.
    static func swiftBlocks(in text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if let lines = current, line == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The examples of every Swift file in this folder.
    static func examples() throws -> [Example] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        return try files.sorted().flatMap { file in
            self.examples(in: try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8))
        }
    }

    /// The examples between the markers of `source`, parts of the same label joined in order.
    static func examples(in source: String) -> [Example] {
        let beginMarker = "// example begin: "
        var parts: [(label: String, lines: [Substring])] = []
        var current: (label: String, lines: [Substring])?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if current == nil, trimmed.hasPrefix(beginMarker) {
                current = (String(trimmed.dropFirst(beginMarker.count)), [])
            } else if let part = current, trimmed == "// example end" {
                parts.append(part)
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        var examples: [Example] = []
        for part in parts {
            let text = self.unindented(part.lines)
            if let index = examples.firstIndex(where: { $0.label == part.label }) {
                examples[index].text += "\n\n" + text
            } else {
                examples.append(Example(label: part.label, text: text))
            }
        }
        return examples
    }

    /// `lines` without the indentation they all share, joined.
    static func unindented(_ lines: [Substring]) -> String {
        let indents = lines.filter { !$0.allSatisfy { $0 == " " } }.map { $0.prefix { $0 == " " }.count }
        let indent = indents.min() ?? 0
        return lines.map { $0.count >= indent ? String($0.dropFirst(indent)) : "" }.joined(separator: "\n")
    }
}
