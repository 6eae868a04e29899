// The Autobahn|Testsuite testee for Tether's client: `tether-autobahn --agent NAME [--via transport|client]
// [--url ws://127.0.0.1:9001] [--cases N-M]`. It asks the fuzzingserver for its case count, runs each case
// echoing every message back unchanged, then asks the server to write its reports. `scripts/autobahn.sh` runs it.
import Glibc
import Foundation

let usage = "usage: tether-autobahn --agent NAME [--via transport|client] [--url ws://HOST:PORT] [--cases N-M]"

var options = AutobahnOptions()
var remaining = Array(CommandLine.arguments.dropFirst())[...]
while let flag = remaining.popFirst() {
    guard let value = remaining.popFirst() else {
        FileHandle.standardError.write(Data("tether-autobahn: \(flag) needs a value\n\(usage)\n".utf8))
        exit(2)
    }
    do {
        try options.set(flag, value)
    } catch {
        FileHandle.standardError.write(Data("tether-autobahn: \(error)\n\(usage)\n".utf8))
        exit(2)
    }
}
guard !options.agent.isEmpty else {
    FileHandle.standardError.write(Data("tether-autobahn: --agent is required\n\(usage)\n".utf8))
    exit(2)
}
do {
    try await AutobahnTestee(options: options).run()
} catch {
    FileHandle.standardError.write(Data("tether-autobahn: \(error)\n".utf8))
    exit(1)
}
