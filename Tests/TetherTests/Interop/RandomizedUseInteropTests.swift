#if os(Linux)
import Testing

/// The randomized suite (`RandomizedUseTests`) against a server Tether did not write: Python's `websockets` echoing
/// and recording every message (`peer.py serve --record-dir`), with permessage-deflate and context takeover both
/// ways, closing connections on its own as the seed draws. Every round compresses. Run by scripts/interop.sh, which
/// sets up websockets; skipped otherwise.
@Suite(.serialized, .enabled(if: PythonPeer.isConfigured, PythonPeer.notConfigured))
struct RandomizedUseInteropTests {
    static let fixedSeed: UInt64 = 0x35_7E7E_0001

    @Test func everyAcceptedSendArrivesOrIsReportedAgainstWebsocketsWithContextTakeover() async throws {
        for seed in RandomizedUse.seeds(fixed: Self.fixedSeed, compressed: true) {
            let peer = try await PythonUsePeer(seed: seed)
            await RandomizedUse.play(seed, peer: peer, filter: "RandomizedUseInteropTests")
            peer.stop()
        }
    }
}
#endif
