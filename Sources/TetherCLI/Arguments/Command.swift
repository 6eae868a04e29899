import Foundation
import Tether

/// A parsed command line.
package enum Command: Equatable, Sendable {
    case check(CheckOptions)
    case connect(ConnectOptions)
    case serve(ServeOptions)
    /// `--help`, `-h` or `help [COMMAND]`: print the usage (of one command) and exit 0.
    case help(String?)
    /// `--version` or `version`: print the version and exit 0.
    case version
}
