#if os(Linux)
import Testing

/// What an app does with one connection from several places: tasks that send at once, each awaiting its own sends,
/// numbered JSON texts (`InteropPayload.json`) that compress against each other; and the check of what came back.
struct ConcurrentSenders {
    let tasks: Int
    let count: Int

    /// Runs the tasks: each sends its `count` texts in order through `send`.
    func send(_ send: @escaping @Sendable (String) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<self.tasks {
                group.addTask {
                    for sequence in 0..<self.count {
                        try await send(InteropPayload.json(task: task, sequence: sequence))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Reads every message sent back with `next` (nil: a message that is not a text, or none came) and expects each
    /// to be exactly a text that was sent, every task's all there and in its order.
    func expectEchoes(
        _ next: () async -> String?, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        var sequences = [[Int]](repeating: [], count: self.tasks)
        var damaged: [String] = []
        for _ in 0..<(self.tasks * self.count) {
            guard let text = await next() else {
                damaged.append("(no text)")
                break
            }
            guard let (task, sequence) = InteropPayload.parseJSON(text), task < self.tasks else {
                damaged.append(String(text.prefix(80)))
                continue
            }
            sequences[task].append(sequence)
        }
        #expect(damaged.isEmpty, "\(damaged.count) echoes are not what was sent: \(damaged.prefix(3))",
                sourceLocation: sourceLocation)
        for task in 0..<self.tasks {
            #expect(sequences[task] == Array(0..<self.count), "task \(task)", sourceLocation: sourceLocation)
        }
    }
}
#endif
