import Foundation
import Testing

@testable import TwofoldServer

@Suite struct SecureTokenTests {
    @Test func hashesAreLowerCaseHexSHA256() {
        // FIPS 180-2 test vector for "abc".
        #expect(
            SecureToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect([0x00, 0x0F, 0xA0, 0xFF].hexString == "000fa0ff")
    }

    @Test func tokensAreBase64URLWithoutPadding() {
        let token = SecureToken.generate()
        #expect(token.count == 43)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
