// A value made on one thread and handed to a task through a CheckedContinuation: the awaiting task reads it only
// after `await` returns, which the language orders after `resume`. ThreadSanitizer reports the read as a race with
// the writes in the initialiser, because the hand-off happens inside the uninstrumented concurrency runtime and
// Dispatch. This is how ConnectRace hands a TCPConnection, made on the loop thread, to the connecting task.
import Foundation
import Synchronization

final class Made: Sendable {
    let numbers: [Int]
    let state = Mutex(0)

    init(_ count: Int) { self.numbers = Array(0..<count) }
}

@main struct ContinuationHandOff {
    static func main() async {
        var total = 0
        for round in 0..<500 {
            let made: Made = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: Made(round % 7 + 1)) }.start()
            }
            total += made.numbers.count
            made.state.withLock { $0 += 1 }
        }
        print("handed over", total)
    }
}
