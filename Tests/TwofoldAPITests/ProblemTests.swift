import Foundation
import Testing
import TwofoldAPI

@Suite struct ProblemTests {
    @Test func encodesTheRFC9457FieldsAndOmitsAbsentOnes() throws {
        let problem = Problem(status: 404, code: .notFound, title: "Not found", detail: "No resource lives here.")
        let encoder = Wire.encoder()
        let json = String(decoding: try encoder.encode(problem), as: UTF8.self)
        #expect(
            json
                == #"{"code":"not_found","detail":"No resource lives here.","status":404,"title":"Not found","type":"https://twofold.dev/problems/not_found"}"#
        )
    }

    @Test func lockoutFieldsRoundTrip() throws {
        let until = Date(timeIntervalSince1970: 1_800_000_000)
        let problem = Problem(
            status: 429, code: .locked, title: "Too many attempts", attemptsRemaining: 0, retryAfter: 300,
            lockoutUntil: until)
        let data = try Wire.encoder().encode(problem)
        #expect(String(decoding: data, as: UTF8.self).contains(#""lockoutUntil":"2027-01-15T08:00:00Z""#))
        #expect(try Wire.decoder().decode(Problem.self, from: data) == problem)
    }

    @Test func codesAreStableStrings() throws {
        #expect(ErrorCode.validationFailed.rawValue == "validation_failed")
        #expect(ErrorCode.stepUpRequired.rawValue == "step_up_required")
        #expect(ErrorCode.accountLocked.rawValue == "account_locked")
        let decoded = try JSONDecoder().decode(
            [ErrorCode].self, from: Data(#"["device_insecure","some_future_code"]"#.utf8))
        #expect(decoded == [.deviceInsecure, ErrorCode(rawValue: "some_future_code")])
    }
}

@Suite struct SeedShapeTests {
    /// Seed 000's `TwoFAState` fields, with `null` where nothing is configured.
    @Test func twoFactorStatusHasSeed000sShape() throws {
        let status = TwoFactorStatus(
            methods: [], totpConfiguredAt: nil, sms: .init(enabled: false, maskedDestination: nil),
            email: .init(enabled: false, maskedDestination: "a•••@example.com"), backupCodesRemaining: 0,
            backupCodesGeneratedAt: nil, trustedDeviceCount: 0, serverTime: Date(timeIntervalSince1970: 0))
        let encoder = Wire.encoder()
        let json = String(decoding: try encoder.encode(status), as: UTF8.self)
        #expect(
            json
                == #"{"backupCodes":{"generatedAt":null,"remaining":0},"email":{"enabled":false,"maskedDestination":"a•••@example.com"},"isEnabled":false,"primaryMethod":null,"serverTime":"1970-01-01T00:00:00Z","sms":{"enabled":false},"totp":{"configuredAt":null,"enabled":false},"trustedDevices":{"count":0},"webauthn":{"credentials":[],"enabled":false}}"#
        )
    }
}
