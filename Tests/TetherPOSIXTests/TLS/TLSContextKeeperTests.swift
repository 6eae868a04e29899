#if os(Linux)
import Foundation
import Testing
@testable import TetherPOSIX

/// Who keeps a client context, and so its sessions: the process the 16 most recently asked for, a keeper its own.
@Suite struct TLSContextKeeperTests {
    /// Option sets no other test asks for: each pins a random digest (verification off, so no trust store is read).
    private static func distinctOptions(_ count: Int) -> [TLSClientOptions] {
        (0..<count).map { _ in
            let digest = (0..<32).map { _ in UInt8.random(in: 0...255) }
            return TLSClientOptions(
                pins: ["sha256/" + Data(digest).base64EncodedString()], insecureSkipVerification: true)
        }
    }

    @Test func aKeptContextOutlivesAnyNumberOfOtherOptionSets() throws {
        let keeper = TLSContextKeeper()
        let mine = Self.distinctOptions(1)[0]
        // Only the keeper (and, for now, the process's recent ones) holds it.
        weak let watched = try keeper.context(for: mine)
        // More than the process holds itself, each dropped at once.
        for other in Self.distinctOptions(40) { _ = try TLSContext.sharedClient(other) }
        let again = try keeper.context(for: mine)
        #expect(watched != nil)
        #expect(again === watched)
        // And every caller with the same options still shares it.
        #expect(try TLSContext.sharedClient(mine) === again)
    }

    @Test func aContextNobodyHoldsIsFreedOnceSixteenOthersWereAskedForSince() throws {
        let options = Self.distinctOptions(17)
        weak let watched = try TLSContext.sharedClient(options[0])
        #expect(watched != nil)
        // Other tests asking for contexts meanwhile only push it out sooner.
        for other in options.dropFirst() { _ = try TLSContext.sharedClient(other) }
        #expect(watched == nil)
    }

    @Test func aKeeperKeepsItsMostRecentlyUsedUpToItsCapacity() throws {
        let keeper = TLSContextKeeper(capacity: 2)
        let options = Self.distinctOptions(3)
        weak let first = try keeper.context(for: options[0])
        _ = try keeper.context(for: options[1])
        _ = try keeper.context(for: options[0])
        _ = try keeper.context(for: options[2])
        // The second went (the least recently used); the first, used again, stays whatever the process drops.
        #expect(keeper.count == 2)
        for other in Self.distinctOptions(16) { _ = try TLSContext.sharedClient(other) }
        #expect(first != nil)
        #expect(try keeper.context(for: options[0]) === first)
    }
}
#endif
