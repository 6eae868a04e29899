import Testing
import TetherCore

/// The seed's event matrix, one test per case, plus the model's own rules.
@Suite struct ConnectivityTests {
    @Test func noCallbackYetIsUnknownAndRequestsAreStillAllowed() {
        var model = Connectivity()
        _ = model.restartMonitor()
        #expect(model.hint.state == .unknown)
        #expect(model.banner == .hidden)
        #expect(model.allowsRequests)
        #expect(model.transferPolicy == .normal)
    }

    @Test func availablePathWithFailingRequestChangesOnlyTheRequestError() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .available)
        let hintBefore = model.hint
        #expect(model.requestFinished(1, outcome: .timeout) == .failed(.timeout))
        #expect(model.hint == hintBefore)
        #expect(model.banner == .requestFailed(.timeout))
        #expect(model.requestFinished(2, outcome: .authFailure) == .failed(.authFailure))
        #expect(model.requestFinished(3, outcome: .serverError(status: 502)) == .failed(.serverError(status: 502)))
        #expect(model.hint == hintBefore)
        #expect(model.banner == .requestFailed(.serverError(status: 502)))
        #expect(model.pending.isEmpty)
        #expect(model.allowsRequests)
        #expect(model.requestFinished(4, outcome: .success) == .completed)
        #expect(model.banner == .hidden)
    }

    @Test func unavailableThenRecoveredClearsTheBannerAndRunsThePendingOperationOnce() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        #expect(model.allowsRequests)
        #expect(model.requestFinished(7, outcome: .timeout) == .awaitingRecovery)
        #expect(model.requestFinished(7, outcome: .timeout) == .awaitingRecovery)
        #expect(model.requestFinished(8, outcome: .timeout) == .awaitingRecovery)
        #expect(model.banner == .offline(pending: 2))
        #expect(model.pathUpdated(generation: monitor, state: .available) == [7, 8])
        #expect(model.banner == .hidden)
        #expect(model.pending.isEmpty)
        #expect(model.pathUpdated(generation: monitor, state: .available) == [])
        #expect(model.pathUpdated(generation: monitor, state: .needsConnection) == [])
    }

    @Test func eventFromACancelledMonitorChangesNothing() {
        var model = Connectivity()
        let old = model.restartMonitor()
        _ = model.pathUpdated(generation: old, state: .available, expensive: true)
        let current = model.restartMonitor()
        _ = model.pathUpdated(generation: current, state: .unavailable)
        _ = model.requestFinished(5, outcome: .timeout)
        let before = model
        #expect(model.pathUpdated(generation: old, state: .available, expensive: true, constrained: true) == [])
        #expect(model == before)
        #expect(model.banner == .offline(pending: 1))
        #expect(model.transferPolicy == .normal)
    }

    @Test func sameEventTwiceGivesTheSameHintAndNoExtraRetryWork() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        _ = model.requestFinished(1, outcome: .timeout)
        #expect(model.pathUpdated(generation: monitor, state: .available, expensive: true) == [1])
        let once = model
        #expect(model.pathUpdated(generation: monitor, state: .available, expensive: true) == [])
        #expect(model == once)
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        let offline = model
        #expect(model.pathUpdated(generation: monitor, state: .unavailable) == [])
        #expect(model == offline)
    }

    @Test func expensiveOrConstrainedChangesOnlyTheTransferPolicyAndDropsNothing() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        _ = model.requestFinished(3, outcome: .timeout)
        let banner = model.banner
        #expect(model.pathUpdated(generation: monitor, state: .unavailable, expensive: true) == [])
        #expect(model.transferPolicy == .deferLarge)
        #expect(model.pathUpdated(generation: monitor, state: .unavailable, expensive: true, constrained: true) == [])
        #expect(model.transferPolicy == .essentialOnly)
        #expect(model.banner == banner)
        #expect(model.pending == [3])
        #expect(model.allowsRequests)
        #expect(model.pathUpdated(generation: monitor, state: .available, constrained: true) == [3])
        #expect(model.transferPolicy == .essentialOnly)
        _ = model.pathUpdated(generation: monitor, state: .available)
        #expect(model.transferPolicy == .normal)
    }

    @Test func unknownIsNeverShownAsOfflineAndNeedsConnectionIsNotOffline() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        #expect(model.banner == .hidden)
        _ = model.pathUpdated(generation: monitor, state: .needsConnection)
        #expect(model.banner == .hidden)
        #expect(model.requestFinished(1, outcome: .timeout) == .failed(.timeout))
    }

    @Test func cancellingAPendingOperationIsExplicit() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        _ = model.requestFinished(1, outcome: .timeout)
        _ = model.requestFinished(2, outcome: .timeout)
        #expect(model.cancel(1) == true)
        #expect(model.cancel(1) == false)
        #expect(model.pathUpdated(generation: monitor, state: .available) == [2])
    }

    @Test func aPendingOperationThatSucceedsOnAUserRetryIsNotRunAgain() {
        var model = Connectivity()
        let monitor = model.restartMonitor()
        _ = model.pathUpdated(generation: monitor, state: .unavailable)
        _ = model.requestFinished(1, outcome: .timeout)
        // The hint never blocks: the user retried and it went through despite "unavailable".
        #expect(model.requestFinished(1, outcome: .success) == .completed)
        #expect(model.hint.state == .unavailable)
        #expect(model.pathUpdated(generation: monitor, state: .available) == [])
    }
}
