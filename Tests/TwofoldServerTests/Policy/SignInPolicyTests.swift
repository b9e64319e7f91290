import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Issue T beside the matrix: the race between adding a factor and stepping up with it, the
/// password change and "sign out everywhere" naming what can still sign in, and the owner's way
/// to remove what they did not add.
@Suite struct SignInPolicyTests {
    typealias Calls = PasskeyCalls

    /// 50 runs of "confirm a new TOTP and, in parallel, step up with it": no step-up, ever. The
    /// factor is recorded on the adding session before its secret becomes active, and the step-up
    /// reads the session again after the code checks out.
    @Test(.tags(.database)) func aFactorConfirmedInParallelNeverStepsUpItsSession() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            var confirmed = 0
            for run in 0..<50 {
                let name = "racer\(run)"
                let token = try await Accounts.signUp(app, name, address: "10.9.\(run).1").accessToken.token
                let client = app.client()
                let setup = try await client.send(API.TwoFactor.totpSetup, bearer: token)
                let secret = try Base32.decode(setup.secret)
                // The confirmation's step and the next one, so the step-up is not a replay.
                let confirm = try TOTPSteps.code(secret, clock)
                let stepUp = try TOTPSteps.code(secret, clock, offset: 30)
                let statuses = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    group.addTask {
                        let answered = try await status {
                            try await client.send(API.TwoFactor.totpVerify, CodeRequest(code: confirm), bearer: token)
                        }
                        return ("confirm", answered)
                    }
                    group.addTask {
                        let answered = try await status {
                            try await client.send(
                                API.Auth.stepUp, StepUpRequest(method: .totp, code: stepUp), bearer: token)
                        }
                        return ("stepUp", answered)
                    }
                    return try await group.reduce(into: [String: Int]()) { $0[$1.0] = $1.1 }
                }
                #expect(statuses["stepUp"] != 200, "run \(run): the session stepped up with the app it added")
                if statuses["confirm"] == 200 { confirmed += 1 }
                clock.advance(by: 61)
            }
            #expect(confirmed == 50, "every confirmation went through")
        }
    }

    /// Control for the race: a session that did not add the app steps up with it.
    @Test func anotherSessionStepsUpWithTheNewApp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let other = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            let client = app.client()
            clock.advance(by: 30)
            _ = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .totp, code: try TOTPSteps.code(secret, clock)), bearer: other)
            clock.advance(by: 30)
            let refused = try await refusal {
                try await client.send(
                    API.Auth.stepUp, StepUpRequest(method: .totp, code: try TOTPSteps.code(secret, clock)),
                    bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 403, "the adding session, sequentially")
            #expect(refused.code == .stepUpRequired)
        }
    }

    /// Item 3: the password change removes passkeys and every enrolled device when asked, and its
    /// notice names what can still sign in, never by a name the adder chose.
    @Test func aPasswordChangeNamesAndRemovesWhatSignsInWithoutIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            var passkey = Passkey()
            let tokens = try await Calls.signUpWithPasskey(app, passkey)
            try await Calls.register(
                app, token: try await Calls.signInWithPasskey(app, &passkey), Passkey(), name: "Owner's YubiKey")
            _ = try await Codes.deliverAll(app, clock: clock)
            let session = try await Calls.signInWithPasskey(app, &passkey)

            func change(_ extra: [String: Bool], to new: String, from old: String) async throws -> [OutgoingMessage] {
                let body = PasswordChangeRequest(
                    currentPassword: old, newPassword: new, removeDeviceKeys: extra["removeDeviceKeys"],
                    removePasskeys: extra["removePasskeys"])
                _ = try await app.client().send(API.Account.changePassword, body, bearer: session)
                return try await Codes.deliverAll(app, clock: clock).filter {
                    $0.body.contains("password was changed")
                }
            }
            let kept = try await change([:], to: "first new passphrase", from: Accounts.password)
            let notice = try #require(kept.first).body
            #expect(notice.contains("These can still sign in without the password"), "\(notice)")
            #expect(notice.components(separatedBy: "a passkey from").count == 3, "both passkeys: \(notice)")
            #expect(!notice.contains("YubiKey"), "never the name its adder chose")
            clock.advance(by: 200)
            let removed = try await change(
                ["removePasskeys": true], to: "second new passphrase", from: "first new passphrase")
            #expect(try #require(removed.first).body.contains("Nothing else can sign in"))
            #expect(try await app.twofold.passkeys.list(userID: tokens.user.id).isEmpty)
        }
    }

    /// Item 3: "sign out everywhere" ends every session, this one included, forgets remembered
    /// devices, and tells the user what can still sign in.
    @Test func signingOutEverywhereForgetsRememberedDevicesAndSaysWhatRemains() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            _ = try await Codes.deliverAll(app, clock: clock)
            let client = app.client()
            _ = try await client.send(API.Auth.logoutAll, bearer: tokens.accessToken.token)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: tokens.accessToken.token) }.status
                    == 401, "this session too")
            var headers = HTTPHeaders.client("10.0.0.1")
            headers.add(name: "X-Trusted-Device", value: device)
            #expect(try await RememberedDeviceSteps.login(app, headers: headers) == (200, true), "a second step again")
            let notice = try await Codes.deliverAll(app, clock: clock).first {
                $0.body.contains("signed out")
            }
            #expect(notice?.body.contains("Nothing else can sign in to your account without the password") == true)
        }
    }

    /// Review of issue T, finding 1: a session that moved the phone (or the email) to a
    /// destination of its choosing cannot step up with codes sent there.
    @Test func codesToADestinationTheSessionChoseNeverVouchForIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let token = try await Accounts.signUp(app).accessToken.token
            for (channel, field, value) in [
                ("sms", "phoneNumber", "+14155550188"), ("email", "email", "thief@example.net"),
            ] {
                let path = channel == "sms" ? API.Account.changePhone.path() : API.Account.changeEmail.path()
                #expect(try await Accounts.put(app, path: path, token: token, [field: value]).0 == 202)
                let code = try #require(
                    try await Codes.deliverMessages(app, clock: clock).last { $0.destination == value }
                ).code
                #expect(
                    try await Accounts.put(app, path: path, token: token, [field: value, "code": code]).0 == 200)
            }
            #expect(
                try await DeviceKeySteps.post(
                    app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "burner"],
                    token: token
                ).0 == 200)
            clock.advance(by: 6 * 60)
            for method in ["sms", "email"] {
                clock.advance(by: 61)
                #expect(
                    try await DeviceKeySteps.post(app, API.Auth.stepUpSend.path(), ["method": method], token: token)
                        .0 == 200)
                let code = try #require(try await Codes.deliverMessages(app, clock: clock).last).code
                let stepped = try await DeviceKeySteps.post(
                    app, API.Auth.stepUp.path(), ["method": method, "code": code], token: token)
                #expect(stepped.0 == 403 && stepped.1.contains("added in this session"), "\(method): \(stepped.1)")
            }
            #expect(try await DeviceKeySteps.post(app, API.TwoFactor.totpSetup.path(), [:], token: token).0 == 403)
        }
    }

    /// Review of issue T, finding 2: enrolling SMS sign-in over a device's key takes the key
    /// away, so it is a downgrade: the key's own proof does not vouch for it.
    @Test func enrollingSMSOverAKeyIsADowngrade() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            try await Accounts.verifyPhone(app, token: tokens.accessToken.token, clock: clock)
            let phone = SoftwareDeviceKey()
            #expect(try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone).0 == 200)
            let keyOnly = try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: phone)
            let replaced = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "iphone-1"],
                token: keyOnly)
            #expect(replaced.0 == 403 && replaced.1.contains("step_up_required"), "\(replaced.1)")
            #expect(try await DeviceKeySteps.challenge(app).method == "secureEnclave", "the key stays")
        }
    }
}
