#!/usr/bin/env python3
"""Writes the outside package that scripts/user-package.sh builds: every ```swift block of README.md and docs/*.md
as an app's own code, in a package whose manifest is the README's (docs/testing.md, "The examples in these pages").

    examples.py ROOT PACKAGE TETHER_PATH

ROOT is the checkout, PACKAGE the directory to write (its Sources/ and Tests/ are replaced), TETHER_PATH the path
the manifest's Tether dependency points to (a link named `tether`, so that the package identity is the README's).

A block is the body of an `async throws` function unless the HTML comment on the line before its fence,
`<!-- example: WORDS -->`, says otherwise:
  (NAME: TYPE, ...)  the function's parameters: what the block uses without declaring it
  file               the block is a whole file (declarations), not a function's body
  test               the block goes to the test target (TetherTesting, TetherTestServer, Swift Testing)
  manifest           the block is the package's Package.swift (the README's; its `.package(url:` line is replaced)
  swift-log          the block goes to a target that also depends on `Logging`, a stand-in of swift-log's `Logger`
                     API (scripts/user-package/Logging.swift; the machine cannot fetch the package), and may import it
  apple              the block needs an Apple SDK (`import os`): not built here, but type-checked by
                     scripts/apple-typecheck.sh against its stand-ins (`apple_blocks`), and may import `os`
  main               the block is the `main.swift` of an executable target of its own (an app's imports), which
                     run-main.py runs against `tether serve`; the page's next fence must be a ```text block of what
                     it prints (its lines must appear in the output, in that order)
A block's leading `import` lines are its file's imports; without them a file imports Foundation and Tether (and, in
the test target, Testing, TetherTesting and TetherTestServer). The app target depends on the `Tether` product only,
and its blocks may import Foundation and Tether only: what an app names must be reachable through `import Tether`.

Every `configuration.NAME(.NAME)*` the pages mention is also compiled, as a property (or method) of a
`WebSocketConfiguration`: a page that names a setting the client does not have fails the build.
"""

import json
import pathlib
import re
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent

APP_IMPORTS = ["Foundation", "Tether"]
APP_ALLOWED = {"Foundation", "Tether"}
TEST_IMPORTS = ["Foundation", "Testing", "Tether", "TetherTesting", "TetherTestServer"]
MARKER = re.compile(r"^<!-- example: (.*) -->$")
PARAMETERS = re.compile(r"\((.*)\)")
WORDS = {"file", "test", "manifest", "main", "swift-log", "apple"}
# What a block may import beyond Foundation and Tether, by its marker word.
EXTRA_IMPORTS = {"swift-log": {"Logging"}, "apple": {"os"}}
# The targets the manifest gets besides the README's: the swift-log stand-in and the examples that use it.
EXTRA_TARGETS = '''
// Added by scripts/user-package.sh: a stand-in of swift-log's API, and the pages' examples that use it.
package.targets += [
    .target(name: "Logging"),
    .target(name: "SwiftLogAdapter", dependencies: ["Logging", .product(name: "Tether", package: "tether")]),
]
'''
SETTING = re.compile(r"\bconfiguration((?:\.[a-z][A-Za-z0-9]*)+)")
DEPENDENCY = re.compile(r'\.package\(url: "[^"]*/tether\.git", [^)]*\)')


class Failure(Exception):
    pass


class Block:
    def __init__(self, page, line, marker, lines, prints=None):
        self.page = page
        self.line = line  # of the block's first line in the page, counted from 1
        self.lines = lines
        self.prints = prints  # the lines of the ```text block that follows it, the next fence of the page
        self.parameters = ""
        self.words = set()
        if marker is not None:
            found = PARAMETERS.search(marker)
            if found:
                self.parameters = found.group(1)
                marker = marker[: found.start()] + marker[found.end():]
            self.words = set(marker.split())
            unknown = self.words - WORDS
            if unknown:
                words = ", ".join(sorted(unknown))
                raise Failure(f"{page}:{line - 2}: unknown word(s) in the example marker: {words}")
            if "main" in self.words and (len(self.words) > 1 or self.parameters):
                raise Failure(f"{page}:{line - 2}: a `main` example is a program of its own: no other word")

    @property
    def where(self):
        return f"{self.page}:{self.line}"


def blocks(root, read=None):
    """Every ```swift block of README.md and docs/*.md, in page order; `read(page)` gives a page's text (default: the
    file's)."""
    pages = ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    read = read or (lambda page: (root / page).read_text(encoding="utf-8"))
    found = []
    for page in pages:
        lines = read(page).split("\n")
        index = 0
        while index < len(lines):
            if lines[index] == "```swift":
                marker = MARKER.match(lines[index - 1]) if index > 0 else None
                if marker is None and index > 0 and lines[index - 1].startswith("<!-- example"):
                    raise Failure(f"{page}:{index}: a malformed example marker: {lines[index - 1]}")
                end = index + 1
                while end < len(lines) and lines[end] != "```":
                    end += 1
                if end == len(lines):
                    raise Failure(f"{page}:{index + 1}: a ```swift block that never ends")
                block = Block(page, index + 2, marker.group(1) if marker else None, lines[index + 1:end])
                if "main" in block.words:
                    block.prints = printed(lines, end + 1, block)
                found.append(block)
                index = end
            index += 1
    return found


def printed(lines, index, block):
    """The lines of the ```text block that is the next fence from `index`: what a `main` example prints."""
    while index < len(lines) and not lines[index].startswith("```"):
        index += 1
    if index == len(lines) or lines[index] != "```text":
        raise Failure(f"{block.where}: a `main` example is followed by a ```text block of what it prints")
    end = index + 1
    while end < len(lines) and lines[end] != "```":
        end += 1
    shown = [line for line in lines[index + 1:end] if line.strip()]
    if not shown:
        raise Failure(f"{block.page}:{index + 1}: the ```text block after a `main` example is empty")
    return shown


def split_imports(block):
    """The block's leading import lines (blank lines among them allowed) and the line index where its code starts."""
    imports = []
    start = 0
    for index, line in enumerate(block.lines):
        if line.startswith("import "):
            imports.append(line[len("import "):].strip())
            start = index + 1
        elif line.strip() == "" and imports:
            start = index + 1
        else:
            break
    return imports, start


def swift_file(block, name):
    """The Swift source of one block, with `#sourceLocation` lines so that a compile error names the page's line."""
    imports, start = split_imports(block)
    in_tests = "test" in block.words
    if not in_tests:
        allowed = APP_ALLOWED.union(*(EXTRA_IMPORTS.get(word, set()) for word in block.words))
        extra = set(imports) - allowed
        if extra:
            raise Failure(f"{block.where}: an app's example imports {', '.join(sorted(extra))}: "
                          "`import Tether` (and Foundation) must be enough")
    if not imports:
        imports = TEST_IMPORTS if in_tests else APP_IMPORTS
    out = [f"// Written by scripts/user-package.sh from {block.where}: do not edit."]
    out += [f"import {module}" for module in imports]
    out.append("")
    code = block.lines[start:]
    first = block.line + start
    if "file" in block.words or "main" in block.words:
        out.append(f'#sourceLocation(file: "{block.page}", line: {first})')
        out += code
        out.append("#sourceLocation()")
    else:
        out.append(f"func {name}({block.parameters}) async throws {{")
        out.append(f'#sourceLocation(file: "{block.page}", line: {first})')
        out += [("    " + line) if line else "" for line in code]
        out.append("#sourceLocation()")
        out.append("}")
    return "\n".join(out) + "\n"


def manifest(block, tether_path, mains):
    """The README's manifest with Tether by path, then an executable target for each `main` example."""
    text = "\n".join(block.lines) + "\n"
    replaced, count = DEPENDENCY.subn(f'.package(path: "{tether_path}")', text)
    if count != 1:
        raise Failure(f"{block.where}: the manifest needs one `.package(url: \".../tether.git\", ...)` dependency")
    out = "// Written by scripts/user-package.sh from " + block.where + ": the README's manifest, Tether by path.\n" \
        + replaced
    if mains:
        out += "\n// Added by scripts/user-package.sh: each `main` example of the pages, an executable of its own.\n"
    for target in mains:
        out += (f'package.targets.append(.executableTarget(name: "{target}", '
                f'dependencies: [.product(name: "Tether", package: "tether")]))\n')
    return out + EXTRA_TARGETS


def apple_blocks(root, read=None):
    """The blocks marked `apple`, each as a Swift file (name, text), for scripts/apple-typecheck.sh."""
    return [(stem(block) + ".swift", swift_file(block, "example_" + stem(block)))
            for block in blocks(root, read) if "apple" in block.words]


def stem(block):
    return re.sub(r"[^A-Za-z0-9]", "_", block.page.removesuffix(".md")) + f"_line{block.line}"


def settings(root):
    """A function that reads every `configuration.NAME...` the pages mention, each at its page's line."""
    out = ["// Written by scripts/user-package.sh: every `configuration.NAME` the pages mention, read from a",
           "// WebSocketConfiguration, so that a page naming a setting the client does not have fails the build.",
           "import Foundation", "import Tether", "",
           "func documentedSettings(_ configuration: WebSocketConfiguration) {"]
    pages = ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    for page in pages:
        for number, line in enumerate((root / page).read_text(encoding="utf-8").split("\n"), start=1):
            for found in SETTING.finditer(line):
                out.append(f'#sourceLocation(file: "{page}", line: {number})')
                out.append(f"    _ = configuration{found.group(1)}")
    out += ["#sourceLocation()", "}"]
    return "\n".join(out) + "\n"


# What the examples call: an app's own code, with the types the client's events carry named as an app names them.
APP_CODE = """\
// Written by scripts/user-package.sh: the app's own functions that the pages' examples call.
import Foundation
import Tether

func handle(_ message: WebSocketMessage) {}
func handle(_ event: WebSocketEvent) {}
func updateBanner(_ state: ConnectionState, _ cause: CloseReason?) {
    let _: SessionPhase = state.phase
    let _: PathState = state.path
    let _: ConnectivityStatus = state.connectivity
}
func report(_ message: WebSocketMessage, _ reason: OutboxDropReason) {}
func decide(_ messages: [WebSocketMessage]) {}
func showRetry(in time: Duration) {}
/// What a connection of the app's own transport tells the heartbeat, and what a lost connection may not have
/// delivered, named with `import Tether` alone.
func progress(of connection: any TransportConnection) -> InboundProgress? { connection.inboundProgress() }
func count(_ lost: UnconfirmedMessages) -> Int { lost.messages.count + lost.notKept }
/// The app's own credentials, which a request provider asks for.
actor Auth {
    func refresh() async throws {}
    func token() async throws -> String { "" }
}
func store(_ cookies: [String]) {}
"""


def main():
    root, package, tether_path = (pathlib.Path(argument) for argument in sys.argv[1:4])
    found = blocks(root)
    manifests = [block for block in found if "manifest" in block.words]
    if len(manifests) != 1 or manifests[0].page != "README.md":
        raise Failure("README.md must show exactly one manifest block (<!-- example: manifest -->)")
    for folder in ("Sources", "Tests"):
        shutil.rmtree(package / folder, ignore_errors=True)
    for target in ("Sources/App", "Tests/AppTests", "Sources/Logging", "Sources/SwiftLogAdapter"):
        (package / target).mkdir(parents=True)
    shutil.copy(HERE / "Logging.swift", package / "Sources/Logging/Logging.swift")
    (package / "Sources/App/AppCode.swift").write_text(APP_CODE)
    (package / "Sources/App/DocumentedSettings.swift").write_text(settings(root))
    count = 0
    apple = 0
    mains = []
    for block in found:
        if block in manifests:
            continue
        if "apple" in block.words:
            apple += 1  # scripts/apple-typecheck.sh type-checks it
            continue
        count += 1
        name = stem(block)
        if "main" in block.words:
            target = "Main_" + name
            (package / "Sources" / target).mkdir()
            (package / "Sources" / target / "main.swift").write_text(swift_file(block, target))
            mains.append({"target": target, "where": block.where, "source": f"Sources/{target}/main.swift",
                          "prints": block.prints})
            continue
        target = "Tests/AppTests" if "test" in block.words else \
            "Sources/SwiftLogAdapter" if "swift-log" in block.words else "Sources/App"
        (package / target / f"{name}.swift").write_text(swift_file(block, "example_" + name))
    (package / "Package.swift").write_text(manifest(manifests[0], tether_path, [main["target"] for main in mains]))
    (package / "mains.json").write_text(json.dumps(mains, indent=2) + "\n")
    print(f"user-package: {count} examples from {len({block.page for block in found})} pages "
          f"({len(mains)} of them programs to run; {apple} Apple-only ones left to scripts/apple-typecheck.sh), "
          "and the manifest")


if __name__ == "__main__":
    try:
        main()
    except Failure as failure:
        print(f"error: {failure}", file=sys.stderr)
        sys.exit(1)
