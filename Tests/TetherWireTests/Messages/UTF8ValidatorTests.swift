import Testing
@testable import TetherWire

@Suite struct UTF8ValidatorTests {
    func isValid(_ bytes: [UInt8]) -> Bool { UTF8Validator.isValid(bytes) }

    @Test func acceptsAsciiAndEveryEncodingLengthAtItsBounds() {
        #expect(self.isValid(Array("Hello, world! plain ascii longer than eight".utf8)))
        #expect(self.isValid([0xC2, 0x80]))                   // U+0080
        #expect(self.isValid([0xDF, 0xBF]))                   // U+07FF
        #expect(self.isValid([0xE0, 0xA0, 0x80]))             // U+0800
        #expect(self.isValid([0xED, 0x9F, 0xBF]))             // U+D7FF
        #expect(self.isValid([0xEE, 0x80, 0x80]))             // U+E000
        #expect(self.isValid([0xF0, 0x90, 0x80, 0x80]))       // U+10000
        #expect(self.isValid([0xF4, 0x8F, 0xBF, 0xBF]))       // U+10FFFF
        #expect(self.isValid(Array("κόσμε 🌍 中文".utf8)))
    }

    @Test func rejectsOverlongsSurrogatesOutOfRangeAndStrayBytes() {
        #expect(!self.isValid([0xC0, 0x80]))                  // overlong NUL
        #expect(!self.isValid([0xC1, 0xBF]))
        #expect(!self.isValid([0xE0, 0x9F, 0xBF]))            // overlong U+07FF
        #expect(!self.isValid([0xED, 0xA0, 0x80]))            // U+D800
        #expect(!self.isValid([0xED, 0xBF, 0xBF]))            // U+DFFF
        #expect(!self.isValid([0xF0, 0x8F, 0xBF, 0xBF]))      // overlong U+FFFF
        #expect(!self.isValid([0xF4, 0x90, 0x80, 0x80]))      // U+110000
        #expect(!self.isValid([0xF5, 0x80, 0x80, 0x80]))
        #expect(!self.isValid([0xFF]))
        #expect(!self.isValid([0x80]))                        // lone continuation
        #expect(!self.isValid([0xC2]))                        // truncated at the end
        #expect(!self.isValid([0xE2, 0x82, 0x41]))            // sequence cut by ASCII
    }

    @Test func codePointSplitAcrossPiecesPassesAndIsOpenBetweenThem() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        for split in 0...3 {
            var validator = UTF8Validator()
            #expect(euro[..<split].withUnsafeBytes { validator.validate($0) })
            #expect(validator.isAtBoundary == (split == 0 || split == 3))
            #expect(euro[split...].withUnsafeBytes { validator.validate($0) })
            #expect(validator.isAtBoundary)
        }
    }

    @Test func invalidContinuationInNextPieceFailsAtThatPiece() {
        var validator = UTF8Validator()
        #expect([UInt8]([0x41, 0xF4]).withUnsafeBytes { validator.validate($0) })
        #expect(![UInt8]([0x90]).withUnsafeBytes { validator.validate($0) })     // would be above U+10FFFF
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var random = SeededRandom(seed: 3)
        for _ in 0..<3000 {
            let length = Int.random(in: 0...24, using: &random)
            // Bias towards bytes that form (and break) multi-byte sequences.
            let pool: [UInt8] = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
                                 0xF0, 0xF4, 0xF5, 0xFF]
            let bytes = (0..<length).map { _ in pool.randomElement(using: &random)! }
            let standard = String(validating: bytes, as: UTF8.self) != nil
            #expect(self.isValid(bytes) == standard, "\(hexString(bytes))")
        }
    }
}
