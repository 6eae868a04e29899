/// Callers suspended until something happens, resumed together. Used on the client's actor only.
struct Waiters {
    private var continuations: [CheckedContinuation<Void, Never>] = []

    mutating func append(_ continuation: CheckedContinuation<Void, Never>) {
        self.continuations.append(continuation)
    }

    /// Resumes every caller waiting now, first first; the list is empty afterwards.
    mutating func resumeAll() {
        let waiting = self.continuations
        self.continuations.removeAll()
        for continuation in waiting {
            continuation.resume()
        }
    }
}
