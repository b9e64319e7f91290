import Testing
import TwofoldCore
import TwofoldTestSupport

@Suite struct OTPAuthURITests {
    /// Seed 000's example, verbatim.
    static let seedExample =
        "otpauth://totp/eToro:user@email.com?secret=JBSWY3DPEHPK3PXP&issuer=eToro&algorithm=SHA1&digits=6&period=30"

    @Test func buildsSeed000sExactForm() throws {
        let uri = try OTPAuthURI(
            issuer: "eToro", account: "user@email.com", secret: Base32.decode("JBSWY3DPEHPK3PXP"))
        #expect(uri.string == Self.seedExample)
    }

    @Test func parsesSeed000sExample() throws {
        let uri = try OTPAuthURI(parsing: Self.seedExample)
        #expect(uri.issuer == "eToro")
        #expect(uri.account == "user@email.com")
        #expect(Base32.encode(uri.secret) == "JBSWY3DPEHPK3PXP")
        #expect(uri.algorithm == .sha1)
        #expect(uri.digits == .six)
        #expect(uri.kind == .totp(period: .thirtySeconds))
    }

    @Test func percentEncodesAndRoundTripsAwkwardNames() throws {
        let uri = try OTPAuthURI(
            kind: .totp(period: TOTPPeriod(60)), issuer: "ACME Co & Sons", account: "jane doe+2fa@example.com",
            secret: [1, 2, 3, 4, 5], algorithm: .sha512, digits: .eight)
        let text = uri.string
        #expect(text.hasPrefix("otpauth://totp/ACME%20Co%20%26%20Sons:jane%20doe%2B2fa@example.com?"))
        #expect(text.contains("&issuer=ACME%20Co%20%26%20Sons&"))
        #expect(try OTPAuthURI(parsing: text) == uri)
    }

    @Test func hotpURIsCarryTheirCounter() throws {
        let uri = try OTPAuthURI(
            kind: .hotp(counter: 42), issuer: nil, account: "alice", secret: [9, 9, 9])
        #expect(uri.string == "otpauth://hotp/alice?secret=BEEQS&algorithm=SHA1&digits=6&counter=42")
        #expect(try OTPAuthURI(parsing: uri.string) == uri)
    }

    @Test func acceptsTheLenientFormsAppsProduce() throws {
        let spaced = try OTPAuthURI(parsing: "otpauth://totp/ACME:%20%20alice?secret=jbswy3dpehpk3pxp")
        #expect(spaced.account == "alice")
        #expect(spaced.issuer == "ACME")
        let encodedColon = try OTPAuthURI(parsing: "OTPAUTH://TOTP/ACME%3Aalice?secret=JBSWY3DPEHPK3PXP&issuer=ACME")
        #expect(encodedColon.issuer == "ACME")
        let plus = try OTPAuthURI(parsing: "otpauth://totp/alice?secret=JBSWY3DPEHPK3PXP&issuer=Big+Corp")
        #expect(plus.issuer == "Big Corp")
        let sha256 = try OTPAuthURI(parsing: "otpauth://totp/alice?secret=JBSWY3DPEHPK3PXP&algorithm=sha256")
        #expect(sha256.algorithm == .sha256)
    }

    static let malformed: [(String, String)] = [
        ("https://totp/a?secret=JBSWY3DP", "must start with otpauth://"),
        ("otpauth://", "must start with otpauth://"),
        ("otpauth://motp/a?secret=JBSWY3DP", "neither totp nor hotp"),
        ("otpauth://totp?secret=JBSWY3DP", "label"),
        ("otpauth://totp/?secret=JBSWY3DP", "label"),
        ("otpauth://totp/ACME:?secret=JBSWY3DP", "account name"),
        ("otpauth://totp/a%2?secret=JBSWY3DP", "percent-encoded"),
        ("otpauth://totp/a%ZZ?secret=JBSWY3DP", "percent-encoded"),
        ("otpauth://totp/a%FF?secret=JBSWY3DP", "percent-encoded"),
        ("otpauth://totp/a", "secret parameter is missing"),
        ("otpauth://totp/a?secret=", "secret parameter is missing"),
        ("otpauth://totp/a?secret=JBSW1", "not valid Base32"),
        ("otpauth://totp/a?secret=JBSWY3DP&secret=JBSWY3DP", "more than once"),
        ("otpauth://totp/a?secret=JBSWY3DP&algorithm=MD5", "algorithm"),
        ("otpauth://totp/a?secret=JBSWY3DP&digits=10", "digits"),
        ("otpauth://totp/a?secret=JBSWY3DP&digits=six", "digits"),
        ("otpauth://totp/a?secret=JBSWY3DP&digits=-6", "digits"),
        ("otpauth://totp/a?secret=JBSWY3DP&period=0", "period"),
        ("otpauth://totp/a?secret=JBSWY3DP&period=99999999999999999999", "period"),
        ("otpauth://hotp/a?secret=JBSWY3DP", "counter parameter"),
        ("otpauth://hotp/a?secret=JBSWY3DP&counter=-1", "counter"),
        ("otpauth://hotp/a?secret=JBSWY3DP&counter=99999999999999999999999", "counter"),
        ("otpauth://totp/ACME:a?secret=JBSWY3DP&issuer=Other", "differs"),
    ]

    @Test("each malformed case has its own error", arguments: malformed)
    func refusesMalformedURIs(input: (String, String)) {
        do {
            _ = try OTPAuthURI(parsing: input.0)
            Issue.record("parsed \(input.0)")
        } catch {
            #expect(error.description.contains(input.1), "\(input.0): \(error.description)")
        }
    }

    @Test func randomMutationsNeverTrap() throws {
        var rng = SplitMix64(seed: 0x07A9)
        let base = Array(Self.seedExample)
        let pool = Array("%:/?&=+ #0aZ7é\u{0}")
        for _ in 0..<5_000 {
            var characters = base
            for _ in 0..<Int(rng.next() % 6 + 1) {
                let index = Int(rng.next() % UInt64(characters.count))
                switch rng.next() % 3 {
                case 0: characters[index] = pool[Int(rng.next() % UInt64(pool.count))]
                case 1: characters.remove(at: index)
                default: characters.insert(pool[Int(rng.next() % UInt64(pool.count))], at: index)
                }
                if characters.isEmpty { characters = ["o"] }
            }
            if let uri = try? OTPAuthURI(parsing: String(characters)) {
                #expect(try OTPAuthURI(parsing: uri.string) == uri)
            }
        }
    }
}
