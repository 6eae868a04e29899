import Testing

@testable import TetherWire

@Suite struct PerMessageDeflateTests {
    typealias Offer = PerMessageDeflateOffer
    typealias Parameters = PerMessageDeflateParameters

    func accept(_ answer: String, offers: [Offer] = [.standard]) throws(HandshakeError) -> Parameters? {
        try PerMessageDeflate.accept(response: HTTPSyntax.splitList(answer), offers: offers)
    }

    func failure(_ answer: String, offers: [Offer] = [.standard]) -> String? {
        do {
            _ = try self.accept(answer, offers: offers)
            return nil
        } catch {
            return error.detail
        }
    }

    // MARK: - The client's offer

    @Test func offersAreSentInOrderOfPreference() {
        #expect(PerMessageDeflate.offerHeader([.standard, .bare])
            == "permessage-deflate; client_max_window_bits, permessage-deflate")
        let everything = Offer(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: .limit(12))
        #expect(PerMessageDeflate.offerHeader([everything]) == "permessage-deflate; server_no_context_takeover; "
            + "client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=12")
    }

    @Test func anOfferWithAWindowOutsideNineToFifteenIsAUsageError() {
        #expect(throws: WireUsageError.invalidHandshakeField("server_max_window_bits")) {
            try Offer(serverMaxWindowBits: 8).validate()
        }
        #expect(throws: WireUsageError.invalidHandshakeField("client_max_window_bits")) {
            try Offer(clientMaxWindowBits: .limit(16)).validate()
        }
        #expect(throws: Never.self) { try Offer(serverMaxWindowBits: 9, clientMaxWindowBits: .limit(15)).validate() }
    }

    // MARK: - The client checks the server's answer

    @Test func noAnswerMeansNoCompression() throws {
        #expect(try self.accept("") == nil)
        #expect(try self.accept("x-other; foo") == nil)
    }

    @Test func aBareAnswerAgreesOnTheDefaults() throws {
        #expect(try self.accept("permessage-deflate") == Parameters())
    }

    @Test func theServerMayAddTakeoverAndItsOwnWindowUnasked() throws {
        let answer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
            + "server_max_window_bits=10"
        #expect(try self.accept(answer, offers: [.bare]) == Parameters(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10,
            clientMaxWindowBits: 15))
    }

    @Test func theServerMayLimitTheClientsWindowWhenTheOfferAllowsIt() throws {
        #expect(try self.accept("permessage-deflate; client_max_window_bits=12")?.clientMaxWindowBits == 12)
        #expect(try self.accept(#"permessage-deflate; client_max_window_bits="9""#)?.clientMaxWindowBits == 9)
        // An offer with a value: the client compresses with at most that, even when the answer is silent.
        #expect(try self.accept("permessage-deflate", offers: [Offer(clientMaxWindowBits: .limit(11))])?
            .clientMaxWindowBits == 11)
    }

    @Test func whatTheClientOfferedToDoItDoesEvenWhenTheAnswerIsSilent() throws {
        let parameters = try self.accept("permessage-deflate", offers: [Offer(clientNoContextTakeover: true)])
        #expect(parameters?.clientNoContextTakeover == true)
    }

    @Test func malformedParametersFailTheHandshakeNamingWhatFailed() {
        #expect(self.failure("permessage-deflate; x_foo") == "permessage-deflate: unknown parameter")
        #expect(self.failure("permessage-deflate; server_no_context_takeover; server_no_context_takeover")
            == "permessage-deflate: server_no_context_takeover repeated")
        #expect(self.failure("permessage-deflate; client_no_context_takeover=1")
            == "permessage-deflate: client_no_context_takeover has a value")
        #expect(self.failure("permessage-deflate; client_max_window_bits")
            == "permessage-deflate: client_max_window_bits without a value")
        #expect(self.failure("permessage-deflate; server_max_window_bits=16")
            == "permessage-deflate: server_max_window_bits out of range")
        #expect(self.failure("permessage-deflate; server_max_window_bits=010")
            == "permessage-deflate: server_max_window_bits value malformed")
        #expect(self.failure("permessage-deflate; server_max_window_bits=1x")
            == "permessage-deflate: server_max_window_bits value malformed")
        #expect(self.failure("permessage-deflate; server_max_window_bits=8")
            == "permessage-deflate: server_max_window_bits=8 not supported")
        #expect(self.failure(#"permessage-deflate; server_max_window_bits="10"#) == "Sec-WebSocket-Extensions malformed")
    }

    @Test func anAnswerBeyondWhatWasOfferedFailsTheHandshake() {
        #expect(self.failure("permessage-deflate; client_max_window_bits=10", offers: [.bare])
            == "permessage-deflate: client_max_window_bits answered but not offered")
        #expect(self.failure("permessage-deflate; client_max_window_bits=12", offers: [Offer(clientMaxWindowBits: .limit(10))])
            == "permessage-deflate: client_max_window_bits=12 above the offered 10")
        #expect(self.failure("permessage-deflate; server_max_window_bits=12", offers: [Offer(serverMaxWindowBits: 10)])
            == "permessage-deflate: server_max_window_bits=12 above the offered 10")
        #expect(self.failure("permessage-deflate", offers: [Offer(serverMaxWindowBits: 10)])
            == "permessage-deflate: server_max_window_bits offered but not answered")
        #expect(self.failure("permessage-deflate", offers: [Offer(serverNoContextTakeover: true)])
            == "permessage-deflate: server_no_context_takeover offered but not answered")
        #expect(self.failure("permessage-deflate, permessage-deflate") == "permessage-deflate accepted twice")
        #expect(self.failure("permessage-deflate", offers: []) == "extension not offered")
    }

    @Test func withSeveralOffersTheAnswerAcceptsTheFirstItFits() throws {
        let offers = [Offer(serverNoContextTakeover: true, serverMaxWindowBits: 10), .bare]
        #expect(try self.accept("permessage-deflate; server_no_context_takeover; server_max_window_bits=9",
            offers: offers) == Parameters(serverNoContextTakeover: true, serverMaxWindowBits: 9))
        #expect(try self.accept("permessage-deflate", offers: offers) == Parameters())
        #expect(self.failure("permessage-deflate; client_max_window_bits=10", offers: offers)
            == "permessage-deflate fits no offer (first: server_no_context_takeover offered but not answered)")
    }

    // MARK: - The server chooses

    func respond(_ offers: String, _ policy: PerMessageDeflateServerPolicy = .init()) -> (Parameters, String)? {
        PerMessageDeflate.respond(to: HTTPSyntax.splitList(offers), policy: policy).map { ($0.parameters, $0.answer) }
    }

    @Test func theServerAnswersTheFirstOfferItCanAccept() {
        let chosen = self.respond("x-other, permessage-deflate; server_max_window_bits=8, permessage-deflate; "
            + "client_max_window_bits")
        #expect(chosen?.0 == Parameters())
        #expect(chosen?.1 == "permessage-deflate")
        #expect(self.respond("permessage-deflate; foo, permessage-deflate; server_no_context_takeover=1") == nil)
        #expect(self.respond("x-other") == nil)
    }

    @Test func theServerHonoursWhatTheOfferAsksAndAddsItsPolicy() {
        let asked = self.respond("permessage-deflate; server_no_context_takeover; server_max_window_bits=10; "
            + "client_max_window_bits=12")
        #expect(asked?.0 == Parameters(serverNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 12))
        #expect(asked?.1 == "permessage-deflate; server_no_context_takeover; server_max_window_bits=10; "
            + "client_max_window_bits=12")
        let policy = PerMessageDeflateServerPolicy(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 11,
            clientMaxWindowBits: 10)
        let imposed = self.respond("permessage-deflate; client_max_window_bits", policy)
        #expect(imposed?.0 == Parameters(
            serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 11,
            clientMaxWindowBits: 10))
        // An offer that does not let the server limit the client's window is declined by a policy that needs to.
        #expect(self.respond("permessage-deflate", policy) == nil)
    }

    @Test func whatTheServerAnswersTheClientAcceptsAsTheSameAgreement() throws {
        let offers: [Offer] = [
            .standard, .bare, Offer(serverNoContextTakeover: true, clientNoContextTakeover: true),
            Offer(serverMaxWindowBits: 9, clientMaxWindowBits: .limit(10)),
        ]
        let policies: [PerMessageDeflateServerPolicy] = [
            .init(), .init(serverNoContextTakeover: true), .init(clientNoContextTakeover: true),
            .init(serverMaxWindowBits: 12), .init(clientMaxWindowBits: 9),
        ]
        for offer in offers {
            for policy in policies {
                guard let (parameters, answer) = self.respond(PerMessageDeflate.offerHeader([offer]), policy) else {
                    #expect(offer.clientMaxWindowBits == .notOffered && policy.clientMaxWindowBits < 15)
                    continue
                }
                #expect(try self.accept(answer, offers: [offer]) == parameters, "\(offer) \(policy)")
            }
        }
    }

    @Test func eachRoleCompressesWithItsOwnSideOfTheAgreement() {
        let parameters = Parameters(serverNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 12)
        #expect(parameters.sending(as: .client) == (false, 12))
        #expect(parameters.receiving(as: .client) == (true, 10))
        #expect(parameters.sending(as: .server) == (true, 10))
        #expect(parameters.receiving(as: .server) == (false, 12))
    }
}
