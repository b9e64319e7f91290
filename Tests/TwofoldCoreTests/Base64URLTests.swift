import Foundation
import Testing
import TwofoldCore

/// The project's one base64url: RFC 4648 §5 without padding, decoded strictly.
@Suite struct Base64URLTests {
    @Test func encodesAsRFC4648WithoutPadding() {
        // RFC 4648 §10's vectors, padding removed.
        for (text, expected) in [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ] {
            #expect(Base64URL.encode(Array(text.utf8)) == expected)
            #expect(Base64URL.decode(expected) == Array(text.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([0xFF, 0xFE, 0xFD, 0xFC]) == "__79_A")
    }

    @Test func everyLengthRoundTripsAndAgreesWithFoundation() {
        let bytes = (0..<64).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
        for length in 0...bytes.count {
            let sample = Array(bytes.prefix(length))
            let standard = Data(sample).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(Base64URL.encode(sample) == standard)
            #expect(Base64URL.decode(standard) == sample)
        }
    }

    /// Only the canonical spelling decodes: a token or signature has one text, so changing a
    /// character never leaves the same bytes (the last character of a 64-byte signature carries
    /// two bits; its other four must be zero).
    @Test func onlyTheCanonicalSpellingDecodes() {
        #expect(Base64URL.decode("Zg") == [0x66])
        #expect(Base64URL.decode("Zh") == nil, "set bits after the last byte")
        #expect(Base64URL.decode("Zm9") == nil, "set bits after the last byte")
        #expect(Base64URL.decode("Zm8") == [0x66, 0x6F])
        #expect(Base64URL.decode("Zg==") == nil, "padding")
        #expect(Base64URL.decode("+/8") == nil, "the standard alphabet")
        #expect(Base64URL.decode("Zm9v Yg") == nil, "whitespace")
        #expect(Base64URL.decode("Zm9vY") == nil, "a length of 4n + 1")
        #expect(Base64URL.decode("Zm9v\u{00E9}") == nil, "a character outside ASCII")
        let signature = Base64URL.encode([UInt8](repeating: 0, count: 64))
        #expect(signature.hasSuffix("A"))
        #expect(Base64URL.decode(signature.dropLast() + "B") == nil)
    }
}
