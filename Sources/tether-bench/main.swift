// Benchmarks: `swift run -c release tether-bench <suite> [options]`.
// Each suite prints `name value` lines on stdout; progress and diagnostics go to stderr.
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
guard let suite = arguments.first else {
    print("usage: tether-bench core|wire|deflate|echo|idle|bounds [options]")
    exit(2)
}
switch suite {
case "core": CoreBench.run(Array(arguments.dropFirst()))
case "wire": WireBench.run(Array(arguments.dropFirst()))
#if os(Linux)
case "deflate": await DeflateBench.run(Array(arguments.dropFirst()))
case "echo": await EchoBench.run(Array(arguments.dropFirst()))
case "idle": await IdleBench.run(Array(arguments.dropFirst()))
case "bounds": await BoundsBench.run(Array(arguments.dropFirst()))
#endif
default:
    print("unknown suite '\(suite)'; expected core, wire, deflate, echo, idle or bounds")
    exit(2)
}
