import Foundation
import Testing
import Tether
@testable import TetherCLI

@Suite struct CheckScenariosTests {
    @Test func theInOrderRunStopsAtTheFirstMessageOutOfPlace() {
        let stream: [WebSocketMessage] = [
            .text("0.aaaa"), .binary(Data("1.bb".utf8)), .text("2."), .text("4."), .text("3."),
        ]
        #expect(CheckScenarios.leadingRunInOrder(stream) == 3)
        #expect(CheckScenarios.leadingRunInOrder([]) == 0)
        #expect(CheckScenarios.leadingRunInOrder([.text("no number"), .text("1.")]) == 0)
        #expect(CheckScenarios.leadingNumber(of: .text("1234567.x")) == 1_234_567)
        #expect(CheckScenarios.leadingNumber(of: .binary(Data())) == nil)
    }
}
