import Foundation
import Testing
import Tether
import TetherWire
@testable import TetherCLI

extension CommandLineParserTests {
    @Test func connectDeflateOffersTheStandardOfferAndItsParametersNarrowIt() throws {
        let url = "ws://127.0.0.1:9000/"
        var plain = ConnectOptions(url: URL(string: url)!)
        #expect(try CommandLineParser.parse(["connect", url]) == .connect(plain))
        plain.deflate = .standard
        #expect(try CommandLineParser.parse(["connect", url, "--deflate"]) == .connect(plain))
        var narrowed = ConnectOptions(url: URL(string: url)!)
        narrowed.deflate = CompressionOptions(offers: [PerMessageDeflateOffer(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: .limit(10))])
        #expect(try CommandLineParser.parse([
            "connect", url, "--deflate-window", "10", "--deflate-no-context-takeover",
        ]) == .connect(narrowed))
        let eight = ArgumentError.invalidNumber(flag: "--deflate-window", value: "8", expected: "window bits 9...15")
        #expect(throws: eight) {
            try CommandLineParser.parse(["connect", url, "--deflate-window", "8"])
        }
    }

    @Test func serveDeflateAcceptsOffers() throws {
        var options = ServeOptions()
        options.deflate = true
        #expect(try CommandLineParser.parse(["serve", "--deflate"]) == .serve(options))
    }
}
