import TetherCLI

import Glibc

exit(await TetherCommand.main(Array(CommandLine.arguments.dropFirst())))
