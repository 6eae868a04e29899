#!/usr/bin/env python3
"""Type-checks, on Linux, every source file an Apple build of Tether's library products compiles.

What an Apple build compiles is read from the manifest (`swift package dump-package`): the targets of the library
products an app can link (APPLE_PRODUCTS) and everything they depend on on an Apple platform (a dependency that says
`.when(platforms: [.linux])` is left out). Each configuration (iOS, an iOS app extension, macOS, watchOS) then
compiles those modules from a copy of their sources in which the platform is Apple's:

  - in `#if`/`#elseif` lines, `os(...)` is true for the configuration's platform and false for every other (Linux
    included), and `canImport(...)` is true for the frameworks the platform has (the stand-ins in
    scripts/apple-stand-ins/, Foundation, Dispatch, ...) and for the modules of the Apple graph, false for Linux's own
    modules (Glibc, FoundationNetworking) and for the package's Linux-only targets; any other `canImport` is an error;
  - an import of a Linux-only module that survives (Glibc, FoundationNetworking, ...) is renamed so that it fails;
  - each `import Foundation` also imports StandInFoundation: Apple's URL loading system and authentication challenge,
    which Linux's Foundation lacks or declares unavailable;
  - `@available(P, unavailable)` holds for the platforms P of the configuration (iOS; iOSApplicationExtension for an
    app extension, which is how `UIApplication.shared` is refused there), in the sources and in the stand-ins alike:
    it becomes `@available(*, deprecated)`, whose warning fails the run (see `apple_availability`).

The stand-ins are built with library evolution, as Apple's frameworks are (their enums are not frozen). The modules
are compiled in Swift 6 mode, and a warning fails the run as an error does. Each stand-in names the SDK file its
declarations were checked against. scripts/apple-stand-ins/Checks/ holds files compiled into a module for the check
alone (the optional delegate methods URLSession calls by selector).

Then the examples of README.md and docs/*.md marked `apple` (docs/testing.md, "The examples in these pages": an app's
code that needs an Apple SDK, such as docs/logging.md's `os.Logger` adapter) are type-checked as an app's module that
imports the Apple build of Tether and the stand-ins (`os` among them), in each configuration that is not the tests'.
scripts/user-package.sh leaves them out, having no SDK.

Then, unless --no-self-test, the check proves it can fail: each mutation in MUTATIONS reintroduces an error an Apple
build would hit (the Linux-only module back in the Apple graph, a CFString matched as a String, UIApplication.shared
where an app extension cannot use it, a misspelt NWPath member, a delegate method Apple would not call) into a copy,
and the type-check of that copy must fail (a page's example among them). `--self-test` runs only those.

What this cannot do: build for Apple (the target is still Linux, so Linux's Foundation stands for Apple's except
for the URL loading system, and Linux's zlib.h for the SDK's), check that the stand-ins match the SDK beyond the
files they name, or run anything. docs/platforms.md says what is and is not checked.
"""

import argparse
import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAND_INS = ROOT / "scripts" / "apple-stand-ins"

# The library products an app on an Apple platform can link, and those declared only on Linux. A library product in
# neither list fails the run: whoever adds one decides where it builds.
APPLE_PRODUCTS = ["TetherCore", "TetherWire", "Tether", "TetherTesting"]
LINUX_PRODUCTS = ["TetherTestServer"]
# System-library targets an Apple build may hold, and what provides them there.
APPLE_SYSTEM_LIBRARIES = {"CZlib": "the SDK's zlib (usr/include/zlib.h, usr/lib/libz.tbd)"}
APPLE_PLATFORM_NAMES = {"macos", "maccatalyst", "ios", "tvos", "watchos", "visionos", "driverkit"}

# The stand-in modules, in build order: module name, file in scripts/apple-stand-ins/, framework it stands for.
STAND_IN_MODULES = [
    ("StandInCoreFoundation", "CoreFoundation.swift", None),
    ("Security", "Security.swift", "Security"),
    ("StandInFoundation", "Foundation.swift", None),
    ("Network", "Network.swift", "Network"),
    ("UIKit", "UIKit.swift", "UIKit"),
    ("os", "os.swift", "os"),
]
# Modules every Apple platform has that are not stand-ins (Linux's own serve the type-check).
APPLE_SYSTEM_MODULES = {"Foundation", "Dispatch", "Synchronization", "Observation", "Testing", "XCTest", "Darwin"}
# Modules Linux has and Apple platforms do not.
LINUX_MODULES = {"Glibc", "Musl", "Bionic", "FoundationNetworking", "FoundationXML", "WinSDK"}
OTHER_OSES = {"Linux", "Windows", "Android", "FreeBSD", "OpenBSD", "WASI", "Cygwin", "Haiku", "PS4"}
APPLE_OSES = {"iOS", "macOS", "tvOS", "watchOS", "visionOS"}


@dataclasses.dataclass(frozen=True)
class Config:
    name: str
    os: str
    frameworks: frozenset
    unavailable: frozenset  # availability platforms whose `unavailable` applies
    tests: bool = False  # also the test targets `swift test` builds there (the modules with -enable-testing)


CONFIGS = [
    Config("iOS", "iOS", frozenset({"Network", "Security", "UIKit", "os"}), frozenset({"iOS"})),
    Config(
        "iOS app extension", "iOS", frozenset({"Network", "Security", "UIKit", "os"}),
        frozenset({"iOS", "iOSApplicationExtension"})),
    Config("macOS", "macOS", frozenset({"Network", "Security", "os"}), frozenset({"macOS"})),
    Config("watchOS", "watchOS", frozenset({"Network", "Security", "UIKit", "os"}), frozenset({"watchOS"})),
    Config(
        "macOS, with its tests", "macOS", frozenset({"Network", "Security", "os"}), frozenset({"macOS"}), tests=True),
]


class CheckFailed(Exception):
    """The type-check found an error; the message holds the compiler's output."""


class UsageError(Exception):
    """The sources or the manifest hold something this script does not know how to treat."""


# ---------------------------------------------------------------------------------------------------------------
# The Apple build graph, from the manifest


@dataclasses.dataclass
class Module:
    name: str
    kind: str  # "regular" or "system"
    path: Path
    dependencies: list


def read_manifest():
    output = subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def apple_graph(dump, with_tests=False):
    """The modules an Apple build of APPLE_PRODUCTS compiles, dependencies first; with the test targets that build
    there too when `with_tests`."""
    targets = {target["name"]: target for target in dump["targets"]}
    products = {product["name"]: product for product in dump["products"] if "library" in product["type"]}
    unknown = set(products) - set(APPLE_PRODUCTS) - set(LINUX_PRODUCTS)
    if unknown:
        raise UsageError(f"library products neither for Apple platforms nor Linux-only: {sorted(unknown)} "
                         "(add each to APPLE_PRODUCTS or LINUX_PRODUCTS in scripts/apple-typecheck.py)")

    def apple_dependencies(target):
        names = []
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            if kind == "product":
                raise UsageError(f"{target['name']} depends on a product of another package: not handled here")
            name, condition = value[0], value[1]
            platforms = set((condition or {}).get("platformNames") or APPLE_PLATFORM_NAMES)
            if platforms & APPLE_PLATFORM_NAMES:
                names.append(name)
        return names

    order, visiting = [], set()

    def visit(name):
        if name in order:
            return
        if name in visiting:
            raise UsageError(f"dependency cycle through {name}")
        visiting.add(name)
        target = targets[name]
        dependencies = apple_dependencies(target)
        for dependency in dependencies:
            visit(dependency)
        order.append(name)
        path = ROOT / (target.get("path") or f"{'Tests' if target['type'] == 'test' else 'Sources'}/{name}")
        modules[name] = Module(name, target["type"], path, dependencies)

    modules = {}
    for product in APPLE_PRODUCTS:
        for target in products[product]["targets"]:
            visit(target)
    libraries = set(order)
    if with_tests:
        # The test targets a Mac builds: those whose every dependency there is in the Apple graph.
        for name, target in targets.items():
            if target["type"] == "test" and set(apple_dependencies(target)) <= libraries:
                visit(name)
    for name in order:
        module = modules[name]
        if module.kind == "system" and name not in APPLE_SYSTEM_LIBRARIES:
            raise CheckFailed(f"{name}, a system library Apple platforms do not have, is in the Apple build graph "
                              f"(through {', '.join(n for n in order if name in modules[n].dependencies)}): "
                              "its dependents must say .when(platforms: [.linux])")
        if module.kind not in ("regular", "system", "test"):
            raise UsageError(f"{name}: a {module.kind} target in the Apple build graph")
    return [modules[name] for name in order], set(targets)


# ---------------------------------------------------------------------------------------------------------------
# Sources as an Apple platform sees them

IF_LINE = re.compile(r"^(\s*#(?:if|elseif)\b)(.*)$")
IMPORT_LINE = re.compile(
    r"^(\s*(?:@[\w]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"
    r"(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?)(\w+)(.*)$")


def apple_condition(expression, config, context):
    def os_value(match):
        name = match.group(1)
        if name == config.os:
            return "true"
        if name in OTHER_OSES or name in APPLE_OSES:
            return "false"
        raise UsageError(f"{context}: unknown os({name})")

    def can_import(match):
        name = match.group(1).split(".")[0]
        if name in config.frameworks or name in APPLE_SYSTEM_MODULES or name in context.graph:
            return "true"
        if name in LINUX_MODULES or name in context.package_targets or name in {m for m, _, f in STAND_IN_MODULES
                                                                                 if f}:
            return "false"
        raise UsageError(f"{context}: canImport({name}) names a module this script does not know on Apple "
                         "platforms (add it to APPLE_SYSTEM_MODULES or LINUX_MODULES)")

    expression = re.sub(r"\bos\(\s*(\w+)\s*\)", os_value, expression)
    return re.sub(r"\bcanImport\(\s*([\w.]+)\s*(?:,[^)]*)?\)", can_import, expression)


def apple_availability(text, platforms):
    """Makes `@available(P, unavailable)` hold for the configuration's platforms P. On Linux no Apple platform is
    active, so it becomes `@available(*, deprecated)`: a use from a context not marked so is a warning (a failure
    here), and a declaration marked so may use another, as a declaration unavailable on P may use what is
    unavailable on P (`@available(*, unavailable)` would forbid that too)."""
    for platform in platforms:
        text = re.sub(r"@available\(\s*" + platform + r"\s*,\s*unavailable", "@available(*, deprecated", text)
    return text


class SourceContext:
    def __init__(self, path, graph, package_targets):
        self.path, self.graph, self.package_targets = path, graph, package_targets

    def __str__(self):
        return str(self.path)


def apple_source(text, config, context):
    lines = []
    for line in text.split("\n"):
        match = IF_LINE.match(line)
        if match:
            line = match.group(1) + apple_condition(match.group(2), config, context)
        match = IMPORT_LINE.match(line)
        if match:
            module = match.group(2)
            if module in LINUX_MODULES:
                line = f"{match.group(1)}{module}_IsNotOnApplePlatforms{match.group(3)}"
            elif module == "Foundation" and not match.group(3).strip().startswith("."):
                line = f"{line}; import StandInFoundation"
        line = re.sub(r"\b(" + "|".join(sorted(LINUX_MODULES)) + r")\.", r"\1_IsNotOnApplePlatforms.", line)
        lines.append(line)
    return apple_availability("\n".join(lines), config.unavailable)


# ---------------------------------------------------------------------------------------------------------------
# Compiling


class Compiler:
    def __init__(self, work, verbose):
        self.work, self.verbose = work, verbose
        self.cache = work / "cache"
        self.built = {}  # content key -> module directory

    def swiftc(self, arguments, what):
        started = time.monotonic()
        result = subprocess.run(["swiftc", *arguments], capture_output=True, text=True)
        output = result.stdout + result.stderr
        if self.verbose:
            print(f"   {what}: {time.monotonic() - started:.1f} s", flush=True)
        return result.returncode, output

    def stand_ins(self, config):
        """Builds the stand-in modules for `config`; returns their directory."""
        sources = []
        for module, file, framework in STAND_IN_MODULES:
            if framework is None or framework in config.frameworks:
                text = apple_availability((STAND_INS / file).read_text(), config.unavailable)
                sources.append((module, text))
        key = hashlib.sha256(repr(sources).encode()).hexdigest()[:16]
        directory = self.work / "stand-ins" / key
        if directory.exists():
            return directory
        (directory / "src").mkdir(parents=True)
        for module, text in sources:
            source = directory / "src" / f"{module}.swift"
            source.write_text(text)
            status, output = self.swiftc(
                ["-emit-module", "-parse-as-library", "-swift-version", "5", "-enable-library-evolution",
                 "-module-name", module, "-emit-module-path", str(directory / f"{module}.swiftmodule"),
                 "-I", str(directory), "-module-cache-path", str(self.cache), str(source)], f"stand-in {module}")
            problems = [line for line in output.splitlines()
                        if re.search(r"(error|warning):", line) and "library evolution support" not in line]
            if status != 0 or problems:
                raise UsageError(f"the stand-in {module} does not build:\n{output}")
        return directory

    def module(self, module, config, graph, package_targets, stand_ins, built, overrides):
        """Compiles `module` as `config` sees it (emitting its interface for the modules after it)."""
        if module.kind == "system":
            return ["-Xcc", f"-fmodule-map-file={module.path / 'module.modulemap'}"]
        files = sorted(module.path.rglob("*.swift"))
        extra = sorted((STAND_INS / "Checks").glob("*.swift")) if module.name == "Tether" else []
        sources = []
        for file in files + extra:
            relative = file.relative_to(ROOT)
            text = overrides.get(str(relative), file.read_text())
            context = SourceContext(relative, graph, package_targets)
            sources.append((str(relative), apple_source(text, config, context)))
        dependency_flags = [flag for name in module.dependencies for flag in built[name][0]]
        key = hashlib.sha256(
            repr((module.name, sources, str(stand_ins), config.tests, [built[name][1] for name in module.dependencies]))
            .encode()).hexdigest()[:16]
        directory = self.work / "modules" / key
        if key not in self.built:
            (directory / "src").mkdir(parents=True, exist_ok=True)
            paths = []
            for relative, text in sources:
                path = directory / "src" / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                paths.append(str(path))
            testing = ["-enable-testing"] if config.tests else []
            status, output = self.swiftc(
                ["-emit-module", "-wmo", "-parse-as-library", "-swift-version", "6", "-module-name", module.name,
                 "-package-name", "tether", "-emit-module-path", str(directory / f"{module.name}.swiftmodule"),
                 "-I", str(stand_ins), "-module-cache-path", str(self.cache), "-DSWIFT_PACKAGE", *testing,
                 *dependency_flags, *paths], f"{config.name}: {module.name}")
            output = output.replace(str(directory / "src") + "/", "").replace(
                " is deprecated", f" is deprecated, or unavailable on {config.name}")
            diagnostics = [line for line in output.splitlines()
                           if re.match(r"^\S+\.swift:\d+:\d+: (error|warning):", line)]
            if status != 0 or diagnostics:
                shutil.rmtree(directory)
                raise CheckFailed(f"{module.name}, as {config.name} compiles it:\n{output}")
            self.built[key] = directory
        flags = ["-I", str(directory)] + dependency_flags
        return flags, key


def typecheck(compiler, dump, config, overrides=None, report=None):
    modules, package_targets = apple_graph(dump, with_tests=config.tests)
    graph = {module.name for module in modules}
    stand_ins = compiler.stand_ins(config)
    built = {}
    for module in modules:
        result = compiler.module(module, config, graph, package_targets, stand_ins, built, overrides or {})
        built[module.name] = (result, module.name) if module.kind == "system" else result
    examples = 0
    if not config.tests:
        examples = typecheck_examples(compiler, config, graph, package_targets, stand_ins, built, overrides or {})
    if report is not None:
        report(modules, examples)


def typecheck_examples(compiler, config, graph, package_targets, stand_ins, built, overrides):
    """Type-checks the pages' `apple` examples as an app's module over the Apple build of Tether; returns how many."""
    sys.path.insert(0, str(ROOT / "scripts" / "user-package"))
    import examples as pages  # scripts/user-package/examples.py: the pages' blocks, as user-package.sh writes them
    read = lambda page: overrides.get(page, (ROOT / page).read_text(encoding="utf-8"))
    try:
        files = pages.apple_blocks(ROOT, read)
    except pages.Failure as failure:
        raise CheckFailed(f"the pages' examples: {failure}")
    if not files:
        return 0
    directory = compiler.work / "examples" / hashlib.sha256(
        repr((config.name, files, built["Tether"][1])).encode()).hexdigest()[:16]
    (directory / "src").mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files:
        path = directory / "src" / name
        path.write_text(apple_source(text, config, SourceContext(name, graph, package_targets)))
        paths.append(str(path))
    status, output = compiler.swiftc(
        ["-typecheck", "-parse-as-library", "-swift-version", "6", "-module-name", "AppleExamples",
         "-I", str(stand_ins), "-module-cache-path", str(compiler.cache), *built["Tether"][0], *paths],
        f"{config.name}: the pages' Apple examples")
    diagnostics = [line for line in output.splitlines() if re.search(r"\.(swift|md):\d+:\d+: (error|warning):", line)]
    if status != 0 or diagnostics:
        raise CheckFailed(f"the pages' Apple examples, as {config.name} compiles them:\n{output}")
    return len(files)


# ---------------------------------------------------------------------------------------------------------------
# The layout rule: Sources/Tether/Linux/ holds what only Linux compiles, Sources/Tether/Apple/ what only an Apple
# platform compiles.


def check_layout():
    problems = []
    for file in sorted((ROOT / "Sources/Tether/Linux").rglob("*.swift")):
        if file.read_text().split("\n", 1)[0] != "#if os(Linux)":
            problems.append(f"{file.relative_to(ROOT)}: a file in Linux/ starts with `#if os(Linux)`")
    for file in sorted((ROOT / "Sources/Tether/Apple").rglob("*.swift")):
        if not file.read_text().split("\n", 1)[0].startswith("#if canImport("):
            problems.append(f"{file.relative_to(ROOT)}: a file in Apple/ starts with `#if canImport(<framework>)`")
    for file in sorted((ROOT / "Sources/Tether").rglob("*.swift")):
        relative = file.relative_to(ROOT)
        if relative.parts[2] in ("Linux", "Apple"):
            continue
        for number, line in enumerate(file.read_text().split("\n"), 1):
            if re.match(r"^\s*import\s+(Network|UIKit|Security|CTetherLinux|Glibc)\b", line):
                problems.append(f"{relative}:{number}: `{line.strip()}` belongs in Apple/ or Linux/")
    if problems:
        raise CheckFailed("the platform boundary of Sources/Tether:\n" + "\n".join(problems))


# ---------------------------------------------------------------------------------------------------------------
# Mutations: errors an Apple build would hit, reintroduced into a copy; the type-check of each copy must fail.


def append(path, text):
    return lambda read: {path: read(path) + text}


def replace(path, old, new):
    def mutate(read):
        original = read(path)
        if old not in original:
            raise UsageError(f"the mutation no longer applies: `{old}` is not in {path}")
        return {path: original.replace(old, new)}
    return mutate


def graph_mutation(dump):
    """Tether depends on TetherPOSIX and CTetherLinux on every platform again."""
    dump = json.loads(json.dumps(dump))
    for target in dump["targets"]:
        if target["name"] == "Tether":
            for dependency in target["dependencies"]:
                kind, value = next(iter(dependency.items()))
                if kind == "target" and value[0] in ("TetherPOSIX", "CTetherLinux"):
                    value[1] = None
    return dump


MUTATIONS = [
    ("1: TetherPOSIX and CTetherLinux back in Tether's Apple build graph (an unconditional dependency)",
     "iOS", None, graph_mutation),
    ("1: a file Apple builds compile imports TetherPOSIX outside a Linux branch",
     "iOS", replace("Sources/Tether/Transport/AddressRange.swift", "/// A CIDR range", "import TetherPOSIX\n\n"
                    "/// A CIDR range"), None),
    ("2: a CFString matched as a String in a switch (`case kSecAttrKeyTypeRSA as String:`)",
     "iOS", append("Sources/Tether/Apple/Security/ServerTrustEvaluator.swift", """
#if canImport(Security)
extension ServerTrustEvaluator {
    static func keyKindReintroduced(_ type: String) -> Int {
        switch type {
        case kSecAttrKeyTypeRSA as String: 1
        default: 0
        }
    }
}
#endif
"""), None),
    ("6: UIApplication.shared as a default argument, in an app extension",
     "iOS app extension", append("Sources/Tether/Apple/UIKit/UIApplicationLifecycleObserver.swift", """
#if canImport(UIKit) && !os(watchOS)
extension UIApplicationLifecycleObserver {
    static func applicationReintroduced(_ application: UIApplication = .shared) -> UIApplication { application }
}
#endif
"""), None),
    ("a misspelt NWPath member (availableInterface)",
     "iOS", replace("Sources/Tether/Apple/Network/NWPathMonitorAdapter.swift", "self.availableInterfaces.map",
                    "self.availableInterface.map"), None),
    ("a URLSession delegate method named unlike Apple's (didOpenWith: for didOpenWithProtocol:)",
     "iOS", replace("Sources/Tether/Transport/URLSession/FoundationWebSocketTask.swift", "didOpenWithProtocol protocol",
                    "didOpenWith protocol"), None),
    ("the redirect delegate method named unlike Apple's (willPerformRedirection: for willPerformHTTPRedirection:)",
     "iOS", replace("Sources/Tether/Transport/URLSession/FoundationWebSocketTask.swift",
                    "willPerformHTTPRedirection response", "willPerformRedirection response"), None),
    ("a page's os.Logger example calling a method os.Logger does not have (warn for warning)",
     "iOS", replace("docs/logging.md", "logger.warning(", "logger.warn("), None),
]


def self_test(compiler, dump):
    configs = {config.name: config for config in CONFIGS}
    failures = []
    for description, config_name, source_mutation, manifest_mutation in MUTATIONS:
        started = time.monotonic()
        overrides = source_mutation(lambda path: (ROOT / path).read_text()) if source_mutation else {}
        mutated_dump = manifest_mutation(dump) if manifest_mutation else dump
        try:
            typecheck(compiler, mutated_dump, configs[config_name], overrides)
        except CheckFailed as failure:
            lines = str(failure).splitlines()
            diagnostic = r"\.(swift|md):\d+:\d+: (error|warning):"
            first = next((line for line in lines if re.search(diagnostic, line)), lines[0])
            print(f"   fails as it must ({time.monotonic() - started:.0f} s): {description}\n      {first.strip()}")
            continue
        failures.append(description)
        print(f"   PASSED, and must not: {description}")
    if failures:
        raise CheckFailed("the type-check did not catch: " + "; ".join(failures))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--self-test", action="store_true", help="only check that each mutation fails")
    parser.add_argument("--no-self-test", action="store_true", help="skip the mutations")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (printed)")
    parser.add_argument("--verbose", action="store_true", help="time each compilation")
    arguments = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="apple-typecheck."))
    compiler = Compiler(work, arguments.verbose)
    started = time.monotonic()
    try:
        dump = read_manifest()
        if not arguments.self_test:
            check_layout()
            for config in CONFIGS:
                def report(modules, examples):
                    files = sum(len(list(m.path.rglob("*.swift"))) for m in modules if m.kind != "system")
                    pages = f", and {examples} Apple examples of the pages" if examples else ""
                    print(f"== {config.name}: {', '.join(m.name for m in modules)} ({files} files){pages} type-check")
                typecheck(compiler, dump, config, report=report)
        if not arguments.no_self_test:
            print("== self-test: each reintroduced error must fail the type-check")
            self_test(compiler, dump)
    except CheckFailed as failure:
        print(failure, file=sys.stderr)
        print("error: the Apple type-check failed", file=sys.stderr)
        return 1
    except UsageError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    finally:
        if arguments.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"== Apple type-check passed ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
