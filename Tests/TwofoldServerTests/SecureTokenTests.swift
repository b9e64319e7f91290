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
        #expect(Data([0xFB, 0xFF]).base64URLEncodedString() == "-_8")
        #expect(Data([0xFF, 0xFE, 0xFD, 0xFC]).base64URLEncodedString() == "__79_A")
        // Every length of a group of three, against Foundation's standard base64.
        let bytes = (0..<64).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
        for length in 0...bytes.count {
            let sample = Data(bytes.prefix(length))
            let standard = sample.base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(sample.base64URLEncodedString() == standard)
            #expect(Array(sample).base64URLEncodedString() == standard)
        }
        let token = SecureToken.generate()
        #expect(token.count == 43)
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
