import Testing
import TetherCore

/// What an app sees when it prints a value the client hands it (a state, a close reason, a drop reason): the case as
/// the docs spell it, not `Optional(TetherCore.CloseReason.userStopped)`.
@Suite struct DescriptionTests {
    @Test func closeReasonsPrintAsTheDocsSpellThem() {
        #expect("\(CloseReason.userStopped)" == "userStopped")
        #expect("\(CloseReason.pongTimeout)" == "pongTimeout")
        #expect("\(CloseReason.peerClosed(code: 1000))" == "peerClosed(code: 1000)")
        #expect("\(CloseReason.peerClosed(code: nil))" == "peerClosed(code: nil)")
        #expect("\(CloseReason.handshakeRejected(status: 401))" == "handshakeRejected(status: 401)")
        #expect("\(CloseReason.tlsFailed(detail: "hostname mismatch"))" == "tlsFailed(detail: \"hostname mismatch\")")
        #expect("\(CloseReason.connectFailed(.refused))" == "connectFailed(refused)")
        let tried = [ConnectAttempt(address: "192.0.2.2:80", failure: .refused)]
        #expect(
            "\(CloseReason.connectFailed(.refused, tried: tried))" == "connectFailed(refused, tried: [192.0.2.2:80: refused])")
        #expect("\(CloseReason.socksRejected(.hostUnreachable))" == "socksRejected(SOCKS host unreachable)")
    }

    /// Optional's own description shows what the wrapped value describes itself as.
    @Test func anOptionalReasonPrintsWithoutTheModuleName() {
        let cause: CloseReason? = .userStopped
        #expect(String(describing: cause) == "Optional(userStopped)")
        let outcome: RequestOutcome? = .closedByServer(code: nil)
        #expect(String(describing: outcome) == "Optional(closedByServer(code: nil))")
    }

    @Test func statesAndHintsPrintTheirCase() {
        #expect("\(SessionPhase.waiting)" == "waiting")
        #expect("\(PathState.needsConnection)" == "needsConnection")
        #expect("\(ConnectivityStatus.online)" == "online")
        #expect("\(ConnectivityStatus.serverUnreachable(.timeout))" == "serverUnreachable(timeout)")
        #expect("\(ConnectivityStatus.serverUnreachable(.rejected(status: 404)))"
            == "serverUnreachable(rejected(status: 404))")
        #expect("\(OutboxDropReason.writeInterrupted)" == "writeInterrupted")
        #expect("\(LifecyclePolicy.keepAndProbe)" == "keepAndProbe")
        #expect("\(InterfaceSwitchPolicy.probe)" == "probe")
        #expect("\(InterfaceSwitchPolicy.makeBeforeBreak(drain: .milliseconds(500)))"
            == "makeBeforeBreak(drain: 0.5 seconds)")
        #expect("\(ConnectFailure.system(24))" == "system(24)")
        #expect("\(TransportEnd.handshakeRejected(status: 503, retryAfter: nil))"
            == "handshakeRejected(status: 503, retryAfter: nil)")
    }

    /// A struct that holds them prints its fields through their descriptions.
    @Test func aStatusPrintsItsFieldsAsTheirCases() {
        let status = SessionStatus(
            phase: .failed, generation: 1, attempts: 0, retryAt: nil, failure: .handshakeRejected(status: 401),
            lastRTT: nil, path: .available, connectivity: .serverUnreachable(.authFailure))
        let printed = "\(status)"
        #expect(printed.contains("phase: failed"))
        #expect(printed.contains("failure: Optional(handshakeRejected(status: 401))"))
        #expect(printed.contains("connectivity: serverUnreachable(authFailure)"))
        #expect(!printed.contains("TetherCore."))
    }
}
