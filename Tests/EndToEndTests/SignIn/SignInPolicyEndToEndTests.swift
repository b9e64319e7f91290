import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one sign-in policy on the built binary, tried as an attacker would: a step-up is not
/// bypassed by adding a factor, an SMS code alone changes nothing, a stale session adds nothing
/// and a downgrade needs proof, the SMS fallback needs an SMS device and a verified number.
@Suite(.serialized) struct SignInPolicyEndToEndTests {
    /// Item 1: a session with no recent second factor cannot add a factor it controls and step up
    /// with it; a factor added in a session never steps that session up; the owner hears of
    /// every added factor; a password change can remove every device key.
    @Test func stepUpCannotBeBypassedByAddingAFactor() async throws {
        try await TestServers.withTarget { target in
            let client = target.client
            let phone = "+14155550161"
            let stale = try await target.register("alice")
            try await target.enableSMS(stale, phone: phone)
            // `stale` proved only the password: every way in the review is refused.
            let key = SoftwareDeviceKey()
            let enroll = DeviceEnrollRequest(
                username: "alice", publicKey: key.publicKey, method: "secureEnclave", deviceId: "evil-phone")
            await target.expectStepUpRequired(API.DeviceKeys.enroll, enroll, bearer: stale)
            let phoneSwap = await refusal {
                try await client.send(
                    API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550999"), bearer: stale)
            }
            #expect(phoneSwap?.status == 403, "\(String(describing: phoneSwap))")
            let totpSetup = await refusal { try await client.send(API.TwoFactor.totpSetup, bearer: stale) }
            #expect(totpSetup?.status == 403, "\(String(describing: totpSetup))")
            #expect(try target.gateway.messages().allSatisfy { $0.to == phone }, "no code went elsewhere")

            // The owner, with a recent SMS code, adds an authenticator app and is told by SMS.
            let owner = try await target.signInWithSMS("alice")
            let before = try target.gateway.messages().count
            let (secret, _) = try await target.enableTOTP(owner)
            let notice = try await target.gateway.nextMessage(after: before) {
                $0.message.contains("authenticator app was added")
            }
            #expect(notice?.to == phone)
            // That session cannot step up with the factor it added; another session can.
            await target.expectStepUpRequired(
                API.Auth.stepUp, StepUpRequest(method: .totp, code: try TestServers.Target.code(secret, offset: 30)),
                bearer: owner)

            // A device key enrolled by the owner, then removed with the password.
            _ = try await client.send(API.DeviceKeys.enroll, enroll, bearer: owner)
            let beforeChange = try target.gateway.messages().count
            _ = try await client.send(
                API.Account.changePassword,
                PasswordChangeRequest(
                    currentPassword: TestAccounts.password, newPassword: "a brand new passphrase 7",
                    removeDeviceKeys: true),
                bearer: owner)
            let told = try await target.gateway.nextMessage(after: beforeChange) {
                $0.message.contains("password was changed")
            }
            #expect(
                told?.message.contains("Nothing else can sign in to your account without the password") == true,
                "\(String(describing: told))")
            let challenge = try await client.send(
                API.DeviceKeys.initiate, DeviceRequest(username: "alice", deviceId: "evil-phone"))
            let signed = await refusal {
                try await client.send(
                    API.DeviceKeys.verifySignature,
                    VerifySignatureRequest(
                        username: "alice", deviceId: "evil-phone", challengeId: challenge.challengeId,
                        signature: try key.sign(challenge: challenge.challenge)))
            }
            #expect(signed?.status == 401, "the removed key signs in no more: \(String(describing: signed))")
        }
    }

    /// Takeover 1 of issue T: on an account whose only second factor is an SMS sign-in device, a
    /// session that proved only an SMS code (a SIM swap) added a passkey, a key or TOTP, changed
    /// the email and removed the owner's device. Now it changes nothing until it proves more.
    @Test func anSMSCodeAloneChangesNothing() async throws {
        try await TestServers.withTarget { target in
            let client = target.client
            let phone = "+14155550171"
            let owner = try await target.register("sid")
            try await TestServers.verifyPhone(target, owner, phone: phone)
            _ = try await client.send(
                API.DeviceKeys.enroll, DeviceEnrollRequest(username: "sid", method: "smsOTP", deviceId: "old-phone"),
                bearer: owner)

            // The attacker holds the number: asks for the fallback code and reads it.
            let before = try target.gateway.messages().count
            _ = try await client.send(API.DeviceKeys.requestOTP, RequestOTPRequest(username: "sid"))
            let code = try #require(try await target.gateway.nextMessage(after: before)?.code)
            let sms = try await client.send(
                API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "sid", otp: code)
            ).token

            let key = SoftwareDeviceKey()
            await target.expectStepUpRequired(
                API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: sms)
            await target.expectStepUpRequired(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "sid", publicKey: key.publicKey, method: "secureEnclave", deviceId: "evil"),
                bearer: sms)
            await target.expectStepUpRequired(API.TwoFactor.totpSetup, NoContent(), bearer: sms)
            await target.expectStepUpRequired(
                API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550999"), bearer: sms)
            await target.expectStepUpRequired(
                API.Account.changeEmail, EmailChangeRequest(email: "thief@example.com"), bearer: sms)
            await target.expectStepUpRequired(
                API.Account.changePhone, PhoneChangeRequest(phoneNumber: "+14155550999"), bearer: sms)
            await target.expectStepUpRequired(
                API.DeviceKeys.unenroll, DeviceRequest(username: "sid", deviceId: "old-phone"), bearer: sms)
            let listing = try await client.send(API.DeviceKeys.devices, "sid", bearer: owner)
            #expect(
                listing.devices.map(\.deviceId) == ["old-phone"],
                "the owner's device is still there, and nothing was added")
            #expect(try target.gateway.messages().allSatisfy { $0.to == phone }, "no code went elsewhere")
        }
    }

    /// Takeovers 2 and 3 of issue T: a stale (or stolen) session added a passkey or a first
    /// device key to a password-only account, swapped the phone through `/2fa/sms/setup`, and
    /// downgraded a device key with no step-up, after which the password alone signed in.
    @Test func aStaleSessionAddsNothingAndADowngradeNeedsProof() async throws {
        try await TestServers.withTarget(environment: ["TWOFOLD_STEP_UP_SECONDS": "60"]) { target in
            let client = target.client
            let stale = try await target.register("pia")
            let dan = try await target.register("dan")
            try await TestServers.verifyPhone(target, dan, phone: "+14155550172")
            let key = SoftwareDeviceKey()
            let enrol = DeviceEnrollRequest(
                username: "dan", publicKey: key.publicKey, method: "secureEnclave", deviceId: "iphone")
            _ = try await client.send(API.DeviceKeys.enroll, enrol, bearer: dan)
            let danKeySession = try await DeviceKeyScenarios(server: target.server, gateway: target.gateway)
                .signIn("dan", device: "iphone", key: key)
            try target.server.advanceClock(by: 61)  // past the step-up window

            let evil = SoftwareDeviceKey()
            await target.expectStepUpRequired(
                API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: stale)
            await target.expectStepUpRequired(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "pia", publicKey: evil.publicKey, method: "secureEnclave", deviceId: "evil"),
                bearer: stale)
            await target.expectStepUpRequired(
                API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550998"), bearer: stale)
            // The owner re-enters the password, and may.
            let fresh = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .password, password: TestAccounts.password), bearer: stale
            ).accessToken.token
            _ = try await client.send(API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: fresh)

            // Takeover 3: the downgrade, from a session whose key proof is old, and from one whose
            // only fresh proof is the key being removed.
            for token in [
                dan,
                try await DeviceKeyScenarios(server: target.server, gateway: target.gateway)
                    .stepUp(danKeySession, device: "iphone", key: key),
            ] {
                await target.expectStepUpRequired(
                    API.DeviceKeys.downgrade, DeviceRequest(username: "dan", deviceId: "iphone"), bearer: token)
            }
            let login = try await client.send(
                API.Auth.login, LoginRequest(username: "dan", password: TestAccounts.password))
            if case .signedIn = login { Issue.record("the password alone still does not sign in") }
        }
    }

    /// Item 2: SMS sign-in is offered only for a device enrolled for it, and only to a number
    /// proven by a code; a number typed at registration receives nothing.
    @Test func theSMSFallbackNeedsAnSMSDeviceAndAVerifiedNumber() async throws {
        try await TestServers.withTarget { target in
            let client = target.client
            let typed = "+14155550162"
            let token = try await target.register("sam", phone: typed)
            let smsDevice = DeviceEnrollRequest(username: "sam", method: "smsOTP", deviceId: "old-phone")
            let refused = await refusal { try await client.send(API.DeviceKeys.enroll, smsDevice, bearer: token) }
            #expect(
                refused?.status == 409,
                "an unverified number cannot carry SMS sign-in: \(String(describing: refused))")
            let key = SoftwareDeviceKey()
            _ = try await client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "sam", publicKey: key.publicKey, method: "secureEnclave", deviceId: "iphone"),
                bearer: token)
            // A success, which tells nothing.
            _ = try await client.send(API.DeviceKeys.requestOTP, RequestOTPRequest(username: "sam", phoneNumber: typed))
            // The delivery worker runs every second: nothing arrives over its next runs.
            #expect(try await TestServers.settled(target.gateway) == 0)
            #expect(try target.gateway.messages().isEmpty, "no code to a key device's owner or an unverified number")
            let guessed = await refusal {
                try await client.send(API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: "sam", otp: "123456"))
            }
            #expect(guessed?.status == 401, "\(String(describing: guessed))")
        }
    }

    /// Parallel submissions on one flow check, and use up, one factor (on SQLite and on
    /// PostgreSQL, whose claims are written differently).
    @Test(arguments: ["sqlite", "postgres"])
    func parallelSubmissionsOnOneFlowUseOneFactor(database: String) async throws {
        var environment: [String: String] = [:]
        if database == "postgres" {
            guard let url = TestAccounts.postgresURL() else { return }
            environment["DATABASE_URL"] = url
        }
        try await TestServers.withTarget(environment: environment) { target in
            let client = target.client
            let token = try await target.register("rob")
            let (secret, codes) = try await target.enableTOTP(token)
            let backupCodes = try #require(codes)
            let login = { () async throws -> String in
                try await client.send(
                    API.Auth.login, LoginRequest(username: "rob", password: TestAccounts.password)
                ).challenge.otpFlowId
            }
            let flow = try await login()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for code in backupCodes {
                    group.addTask {
                        try await client.exchange(
                            API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: flow, backupCode: code)
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            let second = try await login()
            // Either backupCodes[0] was the one used (then, moments later, it is a duplicate:
            // 409 already_used, issue T) or it still works, and then exactly 8 are left: one
            // code per flow, not ten.
            do {
                let used = try await client.send(
                    API.SecondStep.verifyBackupCode,
                    BackupCodeVerifyRequest(otpFlowId: second, backupCode: backupCodes[0]))
                #expect(used.backupCodesRemaining == 8)
            } catch let error as APIError {
                #expect(error.status == 409, "\(error)")
            }

            // Ten submissions of one right authenticator code: one session, and no lockout.
            let third = try await login()
            let code = try TestServers.Target.code(secret, offset: 30)
            let totp = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await client.exchange(
                            API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: third, code: code)
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(totp.filter { $0 == 200 }.count == 1 && !totp.contains(429), "\(totp)")
            let fourth = try await login()
            let wrong = await refusal {
                try await client.send(
                    API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: fourth, code: "000000"))
            }
            #expect(wrong?.status == 401 && wrong?.attemptsRemaining == 4, "\(String(describing: wrong))")

            // A wrong factor gives the flow back: the same flow then takes a right one.
            let fifth = try await login()
            let guess = await refusal {
                try await client.send(
                    API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: fifth, backupCode: "2222-2222"))
            }
            #expect(guess?.status == 401, "\(String(describing: guess))")
            var answers: [Int] = []
            var flowRefused = false
            for code in backupCodes.reversed() where !answers.contains(200) {
                // The answer as it came: its text is searched.
                let answer = try await client.exchange(
                    API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: fifth, backupCode: code))
                answers.append(answer.status)
                // A code used a moment ago is a 409 of its own (issue T); the flow is never refused.
                flowRefused = flowRefused || answer.text.contains("Login flow already used")
            }
            #expect(answers.last == 200 && !flowRefused, "after a wrong code: \(answers)")
        }
    }
}
