import Testing
import TwofoldCore

@Suite struct TOTPTests {
    let secret = Array("12345678901234567890".utf8)

    @Test func verifyReportsTheMatchingStepWithinTheWindow() throws {
        let totp = try TOTP(secret: secret)
        let now: Int64 = 1_111_111_111
        let current = try totp.step(at: now)
        let previous = totp.hotp.code(counter: current - 1)
        let next = totp.hotp.code(counter: current + 1)
        let twoAhead = totp.hotp.code(counter: current + 2)
        #expect(try totp.verify(previous, at: now, window: 1) == current - 1)
        #expect(try totp.verify(next, at: now, window: 1) == current + 1)
        #expect(try totp.verify(twoAhead, at: now, window: 1) == nil)
        #expect(try totp.verify(twoAhead, at: now, window: 2) == current + 2)
    }

    @Test func aStepAlreadyUsedIsRefused() throws {
        let totp = try TOTP(secret: secret)
        let now: Int64 = 1_234_567_890
        let code = try totp.code(at: now)
        let step = try #require(try totp.verify(code, at: now))
        #expect(try totp.verify(code, at: now, after: step) == nil)
        #expect(try totp.verify(code, at: now, after: step - 1) == step)
    }

    @Test func wrongLengthAndNonDigitCodesNeverMatch() throws {
        let totp = try TOTP(secret: secret)
        let code = try totp.code(at: 59)
        for candidate in ["", String(code.dropLast()), code + "0", "abcdef", " " + code] {
            #expect(try totp.verify(candidate, at: 59) == nil, "\(candidate)")
        }
    }

    @Test func windowAtTheStartOfTimeDoesNotUnderflow() throws {
        let totp = try TOTP(secret: secret)
        let code = totp.hotp.code(counter: 0)
        #expect(try totp.verify(code, at: 0, window: 5) == 0)
    }

    @Test func hugeWindowsAreCappedNotLoopedThrough() throws {
        let totp = try TOTP(secret: secret)
        let now: Int64 = 1_234_567_890
        let current = try totp.step(at: now)
        let farAway = totp.hotp.code(counter: current + 11)
        let atTheCap = totp.hotp.code(counter: current + 10)
        #expect(try totp.verify(farAway, at: now, window: .max) == nil)
        #expect(try totp.verify(atTheCap, at: now, window: .max) == current + 10)
    }

    @Test func parametersAreValidated() {
        #expect(throws: OTPParameterError.self) { try OTPDigits(5) }
        #expect(throws: OTPParameterError.self) { try OTPDigits(9) }
        #expect(throws: OTPParameterError.self) { try TOTPPeriod(0) }
        #expect(throws: OTPParameterError.self) { try TOTPPeriod(-30) }
        #expect(throws: OTPParameterError.self) { try HOTP(secret: []) }
        #expect(throws: OTPParameterError.self) { try TOTP(secret: [1]).code(at: -1) }
        #expect(throws: Never.self) { try OTPDigits(7) }
    }

    @Test func sevenDigitsAndOtherPeriodsWork() throws {
        let totp = try TOTP(secret: secret, digits: OTPDigits(7), period: TOTPPeriod(60))
        #expect(try totp.step(at: 119) == 1)
        #expect(try totp.code(at: 119).count == 7)
        // The 7-digit code is the low 7 digits of the 8-digit one (same truncation).
        let eight = try TOTP(secret: secret, digits: .eight, period: TOTPPeriod(60))
        #expect(try eight.code(at: 119).suffix(7) == totp.code(at: 119).suffix(7))
    }

    @Test func algorithmNamesParse() {
        #expect(OTPAlgorithm(name: "sha1") == .sha1)
        #expect(OTPAlgorithm(name: "SHA-256") == .sha256)
        #expect(OTPAlgorithm(name: "Sha512") == .sha512)
        #expect(OTPAlgorithm(name: "md5") == nil)
    }
}
