import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldDevice
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// Issue F's negative matrix over HTTP: each broken ceremony answers a 4xx problem document
/// with its stable reason and changes nothing (no session, passkey, counter, used challenge or
/// consumed login flow); where the challenge is still good, the correct response then succeeds.
/// One case at a time: each is a server of its own, and on PostgreSQL nineteen at once (beside
/// the other suites) would take more connections than the test database allows.
@Suite(.serialized) struct PasskeyRefusalTests {
    typealias Calls = PasskeyCalls

    enum Fault: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case wrongOrigin, wrongRPIDHash, wrongType, challengeMismatched, challengeExpired, challengeReused
        case userPresenceMissing, userVerificationMissingWhenRequired, badSignature, counterRegression
        case unknownCredential, anotherUsersUserHandle, backedUpWithoutBackupEligible, unsupportedAlgorithm
        case malformedCBOR, trailingBytes, nestedSeventeenDeep, truncatedAuthenticatorData, credentialIDOf1024Bytes
        case rawIdNotAttested

        var testDescription: String { rawValue }

        enum Ceremony { case registration, secondStep, passwordless }

        var ceremony: Ceremony {
            switch self {
            case .backedUpWithoutBackupEligible, .unsupportedAlgorithm, .malformedCBOR, .trailingBytes,
                .nestedSeventeenDeep, .credentialIDOf1024Bytes, .rawIdNotAttested:
                .registration
            case .userVerificationMissingWhenRequired, .anotherUsersUserHandle, .challengeReused: .passwordless
            default: .secondStep
            }
        }

        /// Status, problem code and (for `webauthn_refused`) the reason in `errors.credential`.
        var expected: (UInt, String, String?) {
            switch self {
            case .wrongOrigin: (422, "webauthn_refused", "origin_not_allowed")
            case .wrongRPIDHash: (422, "webauthn_refused", "rp_id_mismatch")
            case .wrongType: (422, "webauthn_refused", "wrong_type")
            case .challengeMismatched: (422, "webauthn_refused", "challenge_mismatch")
            case .challengeExpired: (401, "expired", nil)
            case .challengeReused: (409, "already_used", nil)
            case .userPresenceMissing: (422, "webauthn_refused", "user_not_present")
            case .userVerificationMissingWhenRequired: (422, "webauthn_refused", "user_not_verified")
            case .badSignature: (401, "signature_invalid", "bad_signature")
            case .counterRegression: (401, "counter_regression", "counter_regression")
            case .unknownCredential: (422, "webauthn_refused", "unknown_credential")
            case .anotherUsersUserHandle: (422, "webauthn_refused", "user_handle_mismatch")
            case .backedUpWithoutBackupEligible: (422, "webauthn_refused", "backup_state_invalid")
            case .unsupportedAlgorithm: (422, "webauthn_refused", "unsupported_key")
            case .malformedCBOR, .trailingBytes, .nestedSeventeenDeep: (422, "webauthn_refused", "malformed_cbor")
            case .truncatedAuthenticatorData: (422, "webauthn_refused", "malformed_authenticator_data")
            case .credentialIDOf1024Bytes: (422, "webauthn_refused", "credential_id_too_long")
            case .rawIdNotAttested: (422, "webauthn_refused", "credential_id_mismatch")
            }
        }
    }

    @Test(arguments: Fault.allCases)
    func aBrokenCeremonyIsRefusedAndChangesNothing(_ fault: Fault) async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            var passkey = Passkey()
            let alice = try await Calls.signUpWithPasskey(app, passkey)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")

            let answer: PasskeyCalls.Answer
            let before: [Int]
            var retry: (() async throws -> UInt)?
            switch fault.ceremony {
            case .registration:
                let options = try await Calls.creationOptions(app, token: bob.accessToken.token)
                var bad = Passkey()
                var key: CBOR?
                var change: (inout [UInt8], inout [UInt8]) -> Void = { _, _ in }
                switch fault {
                case .backedUpWithoutBackupEligible: bad = Passkey(flags: [.userPresent, .userVerified, .backedUp])
                case .unsupportedAlgorithm:
                    // ES256K (-47), a curve WebAuthn allows and this server does not.
                    key = .map([
                        .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(46)),
                        .init(.negative(0), .unsigned(8)), .init(.negative(1), .bytes(Array(repeating: 1, count: 32))),
                        .init(.negative(2), .bytes(Array(repeating: 2, count: 32))),
                    ])
                case .malformedCBOR: change = { _, object in object[0] = 0xff }
                case .trailingBytes: change = { _, object in object.append(0x00) }
                case .nestedSeventeenDeep: change = { _, object in object = Array(repeating: 0x81, count: 17) + [0x00] }
                case .credentialIDOf1024Bytes: bad = Passkey(credentialID: Array(repeating: 7, count: 1024))
                case .rawIdNotAttested: break
                default: Issue.record("not a registration fault")
                }
                var credential = bad.registration(options, key: key, change: change)
                if fault == .rawIdNotAttested { credential.rawId = Base64URL.encode([1, 2, 3, 4]) }
                before = try await Calls.state(app)
                answer = try await Calls.post(
                    app, API.Passkeys.registerVerify.path(), headers: .bearer(bob.accessToken.token),
                    body: PasskeyRegistrationRequest(credential: credential))
                retry = {
                    try await Calls.post(
                        app, API.Passkeys.registerVerify.path(), headers: .bearer(bob.accessToken.token),
                        body: PasskeyRegistrationRequest(credential: Passkey().registration(options))
                    ).status
                }

            case .secondStep:
                let flow = try await Calls.passwordStep(app, address: "10.0.0.3")
                let options = try await Calls.flowOptions(app, flow: flow.otpFlowId)
                var challenge = options.challenge
                var signer = passkey
                var origin: String?
                var rpID: String?
                var type = "webauthn.get"
                var change: (inout [UInt8], inout [UInt8], inout [UInt8]) -> Void = { _, _, _ in }
                switch fault {
                case .wrongOrigin: origin = "https://evil.test"
                case .wrongRPIDHash: rpID = "evil.test"
                case .wrongType: type = "webauthn.create"
                case .challengeMismatched: challenge = Base64URL.encode(SecureRandom.bytes(32))
                case .challengeExpired: clock.advance(by: 121)
                case .userPresenceMissing: signer.authenticator.flags = [.userVerified]
                case .badSignature: change = { _, _, signature in signature[signature.count - 1] ^= 0x01 }
                case .counterRegression: signer.authenticator.signCount = 0
                case .unknownCredential: signer = Passkey()
                case .truncatedAuthenticatorData: change = { _, data, _ in data = Array(data.prefix(20)) }
                default: Issue.record("not a second-step fault")
                }
                let assertion = try signer.assertion(challenge, type: type, origin: origin, rpID: rpID, change: change)
                before = try await Calls.state(app)
                answer = try await Calls.post(
                    app, API.Passkeys.flowVerify.path(),
                    body: PasskeyFlowVerifyRequest(otpFlowId: flow.otpFlowId, credential: assertion))
                if fault != .challengeExpired {
                    let good = try passkey.assertion(options.challenge)
                    retry = {
                        try await Calls.post(
                            app, API.Passkeys.flowVerify.path(),
                            body: PasskeyFlowVerifyRequest(otpFlowId: flow.otpFlowId, credential: good)
                        ).status
                    }
                }

            case .passwordless:
                let options = try await Calls.signInOptions(app)
                var userHandle = alice.user.id
                var signer = passkey
                switch fault {
                case .userVerificationMissingWhenRequired: signer.authenticator.flags = [.userPresent]
                case .anotherUsersUserHandle: userHandle = bob.user.id
                case .challengeReused:
                    let first = try await Calls.post(
                        app, API.Passkeys.signInVerify.path(),
                        body: PasskeySignInRequest(
                            credential: try passkey.assertion(options.challenge, userHandle: userHandle)))
                    #expect(first.status == 200)
                    signer = passkey
                default: Issue.record("not a passwordless fault")
                }
                let assertion = try signer.assertion(options.challenge, userHandle: userHandle)
                before = try await Calls.state(app)
                answer = try await Calls.post(
                    app, API.Passkeys.signInVerify.path(), body: PasskeySignInRequest(credential: assertion))
                if fault != .challengeReused {
                    let good = try passkey.assertion(options.challenge, userHandle: alice.user.id)
                    retry = {
                        try await Calls.post(
                            app, API.Passkeys.signInVerify.path(), body: PasskeySignInRequest(credential: good)
                        ).status
                    }
                }
            }

            let (status, code, reason) = fault.expected
            #expect(answer.status == status, "\(answer.text)")
            #expect(answer.body.getString(at: 0, length: 1) == "{")
            let problem = try answer.problem()
            #expect(problem.code == code, "\(answer.text)")
            if let reason { #expect(problem.errors?["credential"] == reason, "\(answer.text)") }
            #expect(!(problem.detail ?? "").isEmpty, "a sentence a person can act on")
            #expect(try await Calls.state(app) == before, "a refused ceremony changes nothing")
            if fault == .counterRegression {
                #expect(try await AuditQueries.count(type: "passkey.possible_clone", on: app) == 1)
            }
            if let retry {
                #expect(try await retry() == 200, "the challenge is still good for the right response")
            }
        }
    }

    @Test func requiredUserVerificationAppliesToTheSecondStepToo() async throws {
        try await withTestApp(adjust: { $0.webAuthn.userVerification = .required }) { app in
            var passkey = Passkey()
            _ = try await Calls.signUpWithPasskey(app, passkey)
            let flow = try await Calls.passwordStep(app, address: "10.0.0.3")
            let options = try await Calls.flowOptions(app, flow: flow.otpFlowId)
            #expect(options.userVerification == "required")
            passkey.authenticator.flags = [.userPresent]
            let answer = try await Calls.post(
                app, API.Passkeys.flowVerify.path(),
                body: PasskeyFlowVerifyRequest(
                    otpFlowId: flow.otpFlowId, credential: try passkey.assertion(options.challenge)))
            #expect(answer.status == 422 && answer.reason == "user_not_verified")
        }
    }

    @Test func aChangedBackupStateIsRecordedAndAuditedNotRefused() async throws {
        try await withTestApp { app in
            var passkey = Passkey(flags: [.userPresent, .userVerified, .backupEligible], signCount: 0)
            let alice = try await Calls.signUpWithPasskey(app, passkey)
            passkey.authenticator.flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
            let options = try await Calls.signInOptions(app)
            let answer = try await Calls.post(
                app, API.Passkeys.signInVerify.path(),
                body: PasskeySignInRequest(
                    credential: try passkey.assertion(options.challenge, userHandle: alice.user.id)))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try await AuditQueries.count(type: "passkey.backup_state_changed", on: app) == 1)
            let token = try answer.decode(AuthTokensResponse.self).accessToken.token
            let listed = try await Calls.call(app, .GET, API.Passkeys.list.path(), headers: .bearer(token))
                .decode(PasskeysResponse.self)
            #expect(listed.credentials.first?.synced == true, "the latest backup state is kept")
        }
    }

    @Test func malformedFieldsAreValidationFailures() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let alice = try await Calls.signUpWithPasskey(app, passkey)
            let options = try await Calls.signInOptions(app)
            var assertion = try passkey.assertion(options.challenge, userHandle: alice.user.id)
            assertion.response.signature = "not base64url!"
            let before = try await Calls.state(app)
            let answer = try await Calls.post(
                app, API.Passkeys.signInVerify.path(), body: PasskeySignInRequest(credential: assertion))
            #expect(answer.status == 422 && answer.errors?["credential.response.signature"] != nil)
            assertion = try passkey.assertion(options.challenge)
            let missing = try await Calls.post(
                app, API.Passkeys.signInVerify.path(), body: PasskeySignInRequest(credential: assertion))
            #expect(missing.status == 422 && missing.reason == "user_handle_missing")
            let noBody = try await Calls.post(app, API.Passkeys.signInVerify.path(), body: ["credential": "x"])
            #expect(noBody.status == 422)
            #expect(try await Calls.state(app) == before)
        }
    }

    /// Issue T: passwordless verification is throttled per address, like the options: a
    /// stranger's flood of assertions is refused before any signature is checked.
    @Test func passwordlessVerificationIsThrottledPerAddress() async throws {
        try await withTestApp { app in
            var passkey = Passkey()
            let alice = try await Calls.signUpWithPasskey(app, passkey)
            let options = try await Calls.signInOptions(app)
            var statuses: [UInt] = []
            for _ in 0..<36 {
                var assertion = try passkey.assertion(options.challenge, userHandle: alice.user.id)
                assertion.response.signature = "AAAA"
                statuses.append(
                    try await Calls.post(
                        app, API.Passkeys.signInVerify.path(), headers: .client("10.4.4.4"),
                        body: PasskeySignInRequest(credential: assertion)
                    ).status)
            }
            #expect(statuses.contains(429), "\(statuses)")
            #expect(!statuses.prefix(20).contains(429))
            // Another address is not held back.
            let other = try await Calls.post(
                app, API.Passkeys.signInVerify.path(), headers: .client("10.4.4.5"),
                body: PasskeySignInRequest(
                    credential: try passkey.assertion(options.challenge, userHandle: alice.user.id)))
            #expect(other.status == 200, "\(other.text)")
        }
    }

    /// Issue T: names refuse line and paragraph separators and bidirectional controls, and the
    /// notice of an added passkey names its provider, when and from where, never its name.
    @Test func namesRefuseBidiControlsAndNoticesNeverShowThem() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let passkey = Passkey()
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.deliverAll(app, clock: clock)
            try await Calls.register(app, token: tokens.accessToken.token, passkey, name: "Owner laptop")
            let notice = try #require(
                try await Codes.deliverAll(app, clock: clock).first { $0.body.contains("passkey") }
            ).body
            #expect(!notice.contains("Owner laptop"), "\(notice)")
            #expect(notice.contains("added 2027-01-15 08:00 UTC from 10.0.0.1"), "\(notice)")
            for bad in ["evil\u{202E}txt.exe", "line\u{2028}break", "para\u{2029}", "iso\u{2066}late", "mark\u{200F}"] {
                let refused = try await Calls.call(
                    app, .PATCH, API.Passkeys.rename.path(passkey.id), headers: .bearer(tokens.accessToken.token),
                    body: PasskeyRenameRequest(name: bad))
                #expect(refused.status == 422, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            let model = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(),
                [
                    "username": "alice", "method": "secureEnclave", "deviceId": "p", "deviceModel": "iPhone\u{202E}",
                    "publicKey": SoftwareDeviceKey().publicKey,
                ], token: tokens.accessToken.token)
            #expect(model.0 == 422, "\(model.1)")
        }
    }
}
