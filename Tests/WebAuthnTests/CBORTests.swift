import Foundation
import Testing
import TwofoldTestSupport

@testable import WebAuthn

/// RFC 8949 appendix A: each encoded example decodes to its value; and what WebAuthn must
/// refuse is refused with a reason, never a trap.
struct CBORTests {
    struct Example: Sendable, CustomTestStringConvertible {
        let hex: String
        let value: CBOR
        var testDescription: String { hex }
    }

    static func map(_ entries: [(CBOR, CBOR)]) -> CBOR { .map(entries.map { CBOR.Entry($0.0, $0.1) }) }

    static let examples: [Example] = [
        .init(hex: "00", value: .unsigned(0)), .init(hex: "01", value: .unsigned(1)),
        .init(hex: "0a", value: .unsigned(10)), .init(hex: "17", value: .unsigned(23)),
        .init(hex: "1818", value: .unsigned(24)), .init(hex: "1819", value: .unsigned(25)),
        .init(hex: "1864", value: .unsigned(100)), .init(hex: "1903e8", value: .unsigned(1000)),
        .init(hex: "1a000f4240", value: .unsigned(1_000_000)),
        .init(hex: "1b000000e8d4a51000", value: .unsigned(1_000_000_000_000)),
        .init(hex: "1bffffffffffffffff", value: .unsigned(18_446_744_073_709_551_615)),
        // Bignums are tags, skipped to their byte strings.
        .init(hex: "c249010000000000000000", value: .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])),
        .init(hex: "3bffffffffffffffff", value: .negative(18_446_744_073_709_551_615)),
        .init(hex: "c349010000000000000000", value: .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])),
        .init(hex: "20", value: .negative(0)), .init(hex: "29", value: .negative(9)),
        .init(hex: "3863", value: .negative(99)), .init(hex: "3903e7", value: .negative(999)),
        .init(hex: "f90000", value: .float(0.0)), .init(hex: "f98000", value: .float(-0.0)),
        .init(hex: "f93c00", value: .float(1.0)), .init(hex: "fb3ff199999999999a", value: .float(1.1)),
        .init(hex: "f93e00", value: .float(1.5)), .init(hex: "f97bff", value: .float(65504.0)),
        .init(hex: "fa47c35000", value: .float(100000.0)),
        .init(hex: "fa7f7fffff", value: .float(3.4028234663852886e+38)),
        .init(hex: "fb7e37e43c8800759c", value: .float(1.0e+300)),
        .init(hex: "f90001", value: .float(5.960464477539063e-8)),
        .init(hex: "f90400", value: .float(0.00006103515625)), .init(hex: "f9c400", value: .float(-4.0)),
        .init(hex: "fbc010666666666666", value: .float(-4.1)), .init(hex: "f97c00", value: .float(.infinity)),
        .init(hex: "f9fc00", value: .float(-.infinity)), .init(hex: "fa7f800000", value: .float(.infinity)),
        .init(hex: "faff800000", value: .float(-.infinity)), .init(hex: "fb7ff0000000000000", value: .float(.infinity)),
        .init(hex: "fbfff0000000000000", value: .float(-.infinity)),
        .init(hex: "f4", value: .bool(false)), .init(hex: "f5", value: .bool(true)), .init(hex: "f6", value: .null),
        .init(hex: "f7", value: .undefined), .init(hex: "f0", value: .simple(16)),
        .init(hex: "f8ff", value: .simple(255)),
        .init(hex: "c074323031332d30332d32315432303a30343a30305a", value: .text("2013-03-21T20:04:00Z")),
        .init(hex: "c11a514b67b0", value: .unsigned(1_363_896_240)),
        .init(hex: "c1fb41d452d9ec200000", value: .float(1_363_896_240.5)),
        .init(hex: "d74401020304", value: .bytes([1, 2, 3, 4])),
        .init(hex: "d818456449455446", value: .bytes([0x64, 0x49, 0x45, 0x54, 0x46])),
        .init(hex: "d82076687474703a2f2f7777772e6578616d706c652e636f6d", value: .text("http://www.example.com")),
        .init(hex: "40", value: .bytes([])), .init(hex: "4401020304", value: .bytes([1, 2, 3, 4])),
        .init(hex: "60", value: .text("")), .init(hex: "6161", value: .text("a")),
        .init(hex: "6449455446", value: .text("IETF")), .init(hex: "62225c", value: .text("\"\\")),
        .init(hex: "62c3bc", value: .text("\u{00fc}")), .init(hex: "63e6b0b4", value: .text("\u{6c34}")),
        .init(hex: "64f0908591", value: .text("\u{10151}")),
        .init(hex: "80", value: .array([])),
        .init(hex: "83010203", value: .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
        .init(
            hex: "8301820203820405",
            value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        .init(
            hex: "98190102030405060708090a0b0c0d0e0f101112131415161718181819",
            value: .array((1...25).map { .unsigned($0) })),
        .init(hex: "a0", value: map([])),
        .init(hex: "a201020304", value: map([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])),
        .init(
            hex: "a26161016162820203",
            value: map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
        .init(hex: "826161a161626163", value: .array([.text("a"), map([(.text("b"), .text("c"))])])),
        .init(
            hex: "a56161614161626142616361436164614461656145",
            value: map([
                (.text("a"), .text("A")), (.text("b"), .text("B")), (.text("c"), .text("C")), (.text("d"), .text("D")),
                (.text("e"), .text("E")),
            ])),
        .init(hex: "5f42010243030405ff", value: .bytes([1, 2, 3, 4, 5])),
        .init(hex: "7f657374726561646d696e67ff", value: .text("streaming")),
        .init(hex: "9fff", value: .array([])),
        .init(
            hex: "9f018202039f0405ffff",
            value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        .init(
            hex: "9f01820203820405ff",
            value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        .init(
            hex: "83018202039f0405ff",
            value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        .init(
            hex: "83019f0203ff820405",
            value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        .init(
            hex: "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
            value: .array((1...25).map { .unsigned($0) })),
        .init(
            hex: "bf61610161629f0203ffff",
            value: map([(.text("a"), .unsigned(1)), (.text("b"), .array([.unsigned(2), .unsigned(3)]))])),
        .init(hex: "826161bf61626163ff", value: .array([.text("a"), map([(.text("b"), .text("c"))])])),
        .init(
            hex: "bf6346756ef563416d7421ff", value: map([(.text("Fun"), .bool(true)), (.text("Amt"), .negative(1))])),
    ]

    @Test(arguments: examples) func appendixAExampleDecodes(_ example: Example) throws {
        #expect(try CBOR.decode(Hex.bytes(example.hex)) == example.value)
    }

    @Test func notANumberDecodesAsNaN() throws {
        for hex in ["f97e00", "fa7fc00000", "fb7ff8000000000000"] {
            guard case .float(let value) = try CBOR.decode(Hex.bytes(hex)) else {
                Issue.record("\(hex) is not a float")
                continue
            }
            #expect(value.isNaN, "\(hex)")
        }
    }

    static func refusal(_ hex: String) -> String? {
        do {
            _ = try CBOR.decode(Hex.bytes(hex))
            return nil
        } catch {
            #expect(error.reason == .malformedCBOR)
            return error.message
        }
    }

    @Test func trailingBytesAreRefused() {
        #expect(Self.refusal("0000")?.contains("1 bytes follow") == true)
    }

    @Test func nestingIsCappedAtSixteen() throws {
        let sixteen = String(repeating: "81", count: 15) + "80"
        #expect(try CBOR.decode(Hex.bytes(sixteen)) != .null)
        let seventeen = String(repeating: "81", count: 16) + "80"
        #expect(Self.refusal(seventeen)?.contains("deeper than 16") == true)
        let tags = String(repeating: "c1", count: 17) + "00"
        #expect(Self.refusal(tags)?.contains("deeper than 16") == true)
    }

    @Test(arguments: [
        "", "18", "1900", "1a000000", "1b00000000000000", "42ff", "62c3", "8301", "a201", "a1", "5f4101", "9f01",
        "bf0102", "f9", "fa0000", "fb00000000000000",
    ])
    func truncatedItemsAreRefused(_ hex: String) {
        #expect(Self.refusal(hex) != nil)
    }

    @Test(arguments: [
        // Reserved additional information, a lone break, a length beyond what is left, an
        // element count beyond what is left, a chunk of another kind, a simple value in two
        // bytes below 32, text that is not UTF-8, a key written twice.
        "1c", "ff", "5bffffffffffffffff00", "9bffffffffffffffff", "5f6161ff", "f818", "62c328", "a201020103",
    ])
    func malformedItemsAreRefused(_ hex: String) {
        #expect(Self.refusal(hex) != nil)
    }

    /// Issue T: a map of 11,000 keys was checked key against key (60 million comparisons);
    /// now the count alone refuses it, and duplicate keys are found by one lookup each.
    @Test func elevenThousandKeysAreRefusedInMilliseconds() {
        var definite: [UInt8] = [0xb9, 0x2a, 0xf8]  // a map of 11,000 entries
        var indefinite: [UInt8] = [0xbf]
        for key in 0..<11_000 {
            let entry: [UInt8] = [0x19, UInt8(key >> 8), UInt8(key & 0xff), 0x00]
            definite += entry
            indefinite += entry
        }
        indefinite.append(0xff)
        for document in [definite, indefinite] {
            // Only the decoding is timed (the test's hex helpers are slow in a debug build).
            let start = ContinuousClock.now
            let refused = (try? CBOR.decode(document)) == nil
            let elapsed = ContinuousClock.now - start
            #expect(refused && elapsed < .milliseconds(200), "\(elapsed)")
            #expect(Self.refusal(Hex.string(document))?.contains("at most 256") == true)
        }
    }

    @Test func entriesItemsAndSizeAreCapped() throws {
        let array256 = [0x99, 0x01, 0x00] + [UInt8](repeating: 0, count: 256)
        #expect(try CBOR.decode(array256) != .null, "256 entries are read")
        #expect(Self.refusal(Hex.string([0x99, 0x01, 0x01] + [UInt8](repeating: 0, count: 257))) != nil)
        // 16 arrays of 255 entries each: within each cap, beyond the 4,096 items of a document.
        let wide: [UInt8] =
            [0x90] + (0..<16).flatMap { _ -> [UInt8] in [0x98, 0xff] + [UInt8](repeating: 0, count: 255) }
        #expect(Self.refusal(Hex.string(wide))?.contains("more than 4096 items") == true)
        let big: [UInt8] = [0x5a, 0x00, 0x01, 0x00, 0x01] + [UInt8](repeating: 0, count: 65_537)
        #expect(Self.refusal(Hex.string(big))?.contains("at most 65536") == true)
    }

    /// Keys that are equal but far apart, and of every kind, are still found twice.
    @Test func aDuplicateKeyIsFoundWhereverItIs() {
        var entries: [UInt8] = [0xb8, 0x80]  // 128 entries
        for key in 0..<127 { entries += [0x18, UInt8(key + 100), 0x00] }
        entries += [0x18, 100, 0x01]  // the first key again
        #expect(Self.refusal(Hex.string(entries))?.contains("twice") == true)
        #expect(Self.refusal("a26161006161f5")?.contains("twice") == true, "text keys")
        #expect(Self.refusal("a2820102008201020a")?.contains("twice") == true, "array keys")
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 8949)
        for _ in 0..<20_000 {
            let count = Int(random.next() % 40)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? CBOR.decode(bytes)
        }
    }
}

enum Hex {
    static func bytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func string(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
