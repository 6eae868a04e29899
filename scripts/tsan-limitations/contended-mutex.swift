// Four threads append to one Mutex<[Int]>, every access inside `withLock`. ThreadSanitizer reports a race on the
// array when the lock is contended: the handover then goes through the futex system calls in the uninstrumented
// libswiftSynchronization.so (`_lockSlow`, `_unlockSlow`), which TSan does not see.
import Foundation
import Synchronization

@main struct ContendedMutex {
    static func main() {
        let numbers = Mutex<[Int]>([])
        let done = DispatchGroup()
        for thread in 0..<4 {
            done.enter()
            Thread {
                for value in 0..<20_000 { numbers.withLock { $0.append(thread * 100_000 + value) } }
                done.leave()
            }.start()
        }
        done.wait()
        print("appended", numbers.withLock { $0.count })
    }
}
