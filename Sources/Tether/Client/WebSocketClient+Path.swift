import TetherCore

/// The network path: the monitor's snapshots, or an app's own, as machine events tagged with the monitor's generation.
extension WebSocketClient {
    /// Replaces the path monitor: bumps the hint generation (so the old monitor's late deliveries are stale),
    /// cancels the old monitor, then starts `monitor`, whose snapshots hop to this actor tagged with the new
    /// generation and are checked again there. The client cancels it on `stop()`.
    public func monitorPath(with monitor: any PathMonitor) {
        let generation = self.machine.restartPathMonitor()
        self.stopPathMonitor()
        // One stream per monitor keeps its snapshots in order; the reader tags them with the generation.
        let (updates, sink) = AsyncStream.makeStream(of: PathSnapshot.self, bufferingPolicy: .unbounded)
        // It holds the client only while it hands a snapshot over: a running monitor never keeps the client alive
        // (a client dropped without `stop()` cancels it from its `deinit`).
        let reader = Task { [weak self] in
            for await snapshot in updates {
                guard let self else { return }
                await self.pathDelivered(snapshot, monitor: generation)
            }
        }
        self.pathMonitor = PathFeed(monitor: monitor, reader: reader)
        monitor.start { snapshot in
            sink.yield(snapshot)
        }
        self.afterEvent()
    }

    func stopPathMonitor() {
        guard let current = self.pathMonitor else { return }
        current.monitor.cancel()
        current.reader.cancel()
        self.pathMonitor = nil
    }

    /// Feeds one path update by hand (for apps with their own monitor). It counts for the current monitor generation.
    public func updatePath(
        _ state: PathState, isExpensive: Bool = false, isConstrained: Bool = false, interfacesChanged: Bool = false
    ) {
        self.pathChanged(
            monitor: self.machine.hint.generation, state: state, expensive: isExpensive,
            constrained: isConstrained, interfacesChanged: interfacesChanged
        )
    }

    private func pathDelivered(_ snapshot: PathSnapshot, monitor generation: Int) {
        let report = PathReport(
            state: snapshot.pathState, expensive: snapshot.isExpensive, constrained: snapshot.isConstrained,
            interfaces: snapshot.interfaces.map { "\($0)" } + snapshot.interfaceNames)
        self.handle(self.machine.pathReported(monitor: generation, report, now: self.now()))
    }

    private func pathChanged(
        monitor: Int, state: PathState, expensive: Bool, constrained: Bool, interfacesChanged: Bool
    ) {
        self.handle(self.machine.pathChanged(
            monitor: monitor, state: state, expensive: expensive, constrained: constrained,
            interfacesChanged: interfacesChanged, now: self.now()
        ))
    }
}

/// The running path monitor and the task reading its snapshots.
struct PathFeed {
    var monitor: any PathMonitor
    var reader: Task<Void, Never>
}

