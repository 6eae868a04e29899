import Foundation

enum CoreBench {
    static func run(_ arguments: [String]) { print("core bench not implemented yet"); exit(1) }
}
