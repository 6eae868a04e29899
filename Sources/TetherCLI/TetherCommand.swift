/// The `tether` command: `check`, `connect` and `serve`.
package enum TetherCommand {
    /// Runs the command line on the process's standard streams.
    /// - Parameter arguments: the arguments after the program name.
    /// - Returns: the exit status (0 success, 1 a check failed, 2 bad arguments, 3 a non-retryable stop).
    package static func main(_ arguments: [String]) async -> Int32 {
        await self.run(arguments, io: .standard)
    }

    /// Runs the command line with injected streams (tests run whole commands in-process this way).
    package static func run(_ arguments: [String], io: CommandIO) async -> Int32 {
        let command: Command
        do {
            command = try CommandLineParser.parse(arguments)
        } catch {
            io.writeError("tether: \(error.description)\n\(Usage.hint(after: error, arguments: arguments))\n")
            return 2
        }
        switch command {
        case .help(let topic):
            io.write(Usage.text(for: topic) + "\n")
            return 0
        case .version:
            io.write("tether \(Version.current)\n")
            return 0
        case .check(let options):
            return await CheckCommand.run(options, io: io)
        case .connect(let options):
            return await ConnectCommand.run(options, io: io)
        case .serve(let options):
            return await ServeCommand.run(options, io: io)
        }
    }
}
