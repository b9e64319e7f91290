import Testing
import TwofoldCore
import TwofoldTestSupport

@Suite struct Base32Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
        ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
    ]

    @Test("RFC 4648 §10", arguments: vectors)
    func encodesAndDecodesRFC4648Vectors(vector: (String, String)) throws {
        #expect(Base32.encode(Array(vector.0.utf8), padding: true) == vector.1)
        #expect(Base32.encode(Array(vector.0.utf8)) == vector.1.replacingOccurrences(of: "=", with: ""))
        #expect(try Base32.decode(vector.1) == Array(vector.0.utf8))
    }

    @Test func toleratesLowerCaseSpacesAndMissingPadding() throws {
        let expected = Array("foobar".utf8)
        #expect(try Base32.decode("mzxw6ytboi") == expected)
        #expect(try Base32.decode("MZXW 6YTB OI") == expected)
        #expect(try Base32.decode(" mzxw6ytboi======\n") == expected)
        #expect(try Base32.decode("JBSWY3DPEHPK3PXP").count == 10)
    }

    @Test func refusesEverythingElseWithAReason() {
        for bad in ["", "   ", "====", "MZXW1", "MZXW8YTB", "MZ=XW", "M", "MZX", "MZXW6Y", "MZ@W6YTB", "MZXW6é"] {
            #expect(throws: Base32.DecodingError.self, "\(bad.debugDescription)") { try Base32.decode(bad) }
        }
        do {
            _ = try Base32.decode("AB1C")
            Issue.record("decoded an invalid character")
        } catch {
            #expect(error.description.contains("\"1\""))
            #expect(error.description.contains("offset 2"))
        }
    }

    @Test func randomInputNeverTraps() throws {
        var rng = SplitMix64(seed: 0xB32)
        let pool = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcxyz234567=018 -\u{0}é😀")
        for _ in 0..<5_000 {
            let length = Int(rng.next() % 40)
            let text = String((0..<length).map { _ in pool[Int(rng.next() % UInt64(pool.count))] })
            if let bytes = try? Base32.decode(text) {
                // Whatever decodes re-encodes to the same data.
                #expect(try Base32.decode(Base32.encode(bytes)) == bytes)
            }
        }
    }

    @Test func roundTripsRandomBytes() throws {
        var rng = SplitMix64(seed: 42)
        for length in 1...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(try Base32.decode(Base32.encode(bytes)) == bytes)
            #expect(try Base32.decode(Base32.encode(bytes, padding: true).lowercased()) == bytes)
        }
    }
}
