import TetherCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(await TetherCommand.main(Array(CommandLine.arguments.dropFirst())))
