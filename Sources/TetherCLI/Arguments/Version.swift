/// The version `tether --version` prints: the package's, raised with each release (there is none yet).
enum Version {
    static let current = "0.1.0-dev"
}
