#if os(Linux)
import Testing

/// What apps do, at random: several tasks sending `.now` and `.queued`, from 1 byte to beyond the limit, compressed or
/// not, while a controlling task starts, stops, reconnects, goes to the background and back, changes the path, has
/// the server close or reset the connection, and cancels and replaces the readers of `events`. Every accepted send
/// arrives as it was sent, in its task's order, or is reported; nothing traps; after its scope the client and every
/// connection are gone. See `UsePlan`, `UseRound` and `UseVerdict`; a failure names its seed (`RandomizedUse`).
@Suite struct RandomizedUseTests {
    static let fixedSeed: UInt64 = 0x35_7E7E_0000

    @Test(arguments: [false, true])
    func everyAcceptedSendArrivesOrIsReportedAgainstTheTestServer(compressed: Bool) async throws {
        for seed in RandomizedUse.seeds(fixed: Self.fixedSeed, compressed: compressed) {
            let peer = try TestServerUsePeer()
            await RandomizedUse.play(seed, peer: peer, filter: "RandomizedUseTests")
            await peer.stop()
        }
    }
}
#endif
