import Testing
import TwofoldCore

/// RFC 4226 Appendix D and RFC 6238 Appendix B, kept exactly as published.
@Suite struct RFCVectorTests {
    /// RFC 4226 Appendix D: secret = "12345678901234567890", 6 digits, SHA-1.
    static let rfc4226: [(count: UInt64, hotp: String)] = [
        (0, "755224"), (1, "287082"), (2, "359152"), (3, "969429"), (4, "338314"),
        (5, "254676"), (6, "287922"), (7, "162583"), (8, "399871"), (9, "520489"),
    ]

    @Test("RFC 4226 Appendix D", arguments: rfc4226)
    func hotpMatchesRFC4226(vector: (count: UInt64, hotp: String)) throws {
        let hotp = try HOTP(secret: Array("12345678901234567890".utf8))
        #expect(hotp.code(counter: vector.count) == vector.hotp, "count \(vector.count)")
        #expect(hotp.matches(vector.hotp, counter: vector.count))
    }

    struct TOTPVector: Sendable, CustomTestStringConvertible {
        let time: Int64
        let stepHex: String
        let totp: String
        let mode: OTPAlgorithm
        var testDescription: String { "\(time) \(mode.rawValue) → \(totp)" }
    }

    /// RFC 6238 Appendix B: 8 digits, period 30, T0 = 0.
    static let rfc6238: [TOTPVector] = [
        .init(time: 59, stepHex: "0000000000000001", totp: "94287082", mode: .sha1),
        .init(time: 59, stepHex: "0000000000000001", totp: "46119246", mode: .sha256),
        .init(time: 59, stepHex: "0000000000000001", totp: "90693936", mode: .sha512),
        .init(time: 1_111_111_109, stepHex: "00000000023523EC", totp: "07081804", mode: .sha1),
        .init(time: 1_111_111_109, stepHex: "00000000023523EC", totp: "68084774", mode: .sha256),
        .init(time: 1_111_111_109, stepHex: "00000000023523EC", totp: "25091201", mode: .sha512),
        .init(time: 1_111_111_111, stepHex: "00000000023523ED", totp: "14050471", mode: .sha1),
        .init(time: 1_111_111_111, stepHex: "00000000023523ED", totp: "67062674", mode: .sha256),
        .init(time: 1_111_111_111, stepHex: "00000000023523ED", totp: "99943326", mode: .sha512),
        .init(time: 1_234_567_890, stepHex: "000000000273EF07", totp: "89005924", mode: .sha1),
        .init(time: 1_234_567_890, stepHex: "000000000273EF07", totp: "91819424", mode: .sha256),
        .init(time: 1_234_567_890, stepHex: "000000000273EF07", totp: "93441116", mode: .sha512),
        .init(time: 2_000_000_000, stepHex: "0000000003F940AA", totp: "69279037", mode: .sha1),
        .init(time: 2_000_000_000, stepHex: "0000000003F940AA", totp: "90698825", mode: .sha256),
        .init(time: 2_000_000_000, stepHex: "0000000003F940AA", totp: "38618901", mode: .sha512),
        .init(time: 20_000_000_000, stepHex: "0000000027BC86AA", totp: "65353130", mode: .sha1),
        .init(time: 20_000_000_000, stepHex: "0000000027BC86AA", totp: "77737706", mode: .sha256),
        .init(time: 20_000_000_000, stepHex: "0000000027BC86AA", totp: "47863826", mode: .sha512),
    ]

    /// The seeds of RFC 6238 Appendix A: the ASCII digits repeated to the hash's length.
    static func seed(for mode: OTPAlgorithm) -> [UInt8] {
        switch mode {
        case .sha1: return Array("12345678901234567890".utf8)
        case .sha256: return Array("12345678901234567890123456789012".utf8)
        case .sha512: return Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)
        }
    }

    @Test("RFC 6238 Appendix B", arguments: rfc6238)
    func totpMatchesRFC6238(vector: TOTPVector) throws {
        let totp = try TOTP(secret: Self.seed(for: vector.mode), algorithm: vector.mode, digits: .eight)
        #expect(try totp.step(at: vector.time) == UInt64(vector.stepHex, radix: 16))
        #expect(try totp.code(at: vector.time) == vector.totp)
        #expect(try totp.verify(vector.totp, at: vector.time, window: 0) == UInt64(vector.stepHex, radix: 16))
    }
}
