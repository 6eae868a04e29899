import Foundation

enum WireBench {
    static func run(_ arguments: [String]) { print("wire bench not implemented yet"); exit(1) }
}
