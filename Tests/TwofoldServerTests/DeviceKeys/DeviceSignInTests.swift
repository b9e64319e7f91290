import Crypto
import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Seed 004's device-bound keys with real P-256 keys and DER signatures, as iOS makes them.
@Suite struct DeviceSignInTests {
    @Test func enrolAndSignInWithTheDeviceKey() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            let (status, body) = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            #expect(status == 200)
            #expect(
                try DeviceKeySteps.decode(DeviceEnrollResponse.self, body)
                    == DeviceEnrollResponse(
                        deviceId: "iphone-1", method: "secureEnclave", message: "Device enrolled successfully"))
            let challenge = try await DeviceKeySteps.challenge(app)
            #expect(challenge.method == "secureEnclave" && challenge.expiresIn == 300)
            #expect(Data(base64Encoded: challenge.challenge)?.count == 32)
            let (verified, answer) = try await DeviceKeySteps.verify(
                app, challenge, signature: try phone.sign(challenge: challenge.challenge))
            #expect(verified == 200)
            let signedIn = try DeviceKeySteps.decode(DeviceTokenResponse.self, answer)
            #expect(signedIn.success && signedIn.message == "Authentication successful" && signedIn.refreshToken != nil)
            // The token is a Twofold access token.
            _ = try await app.client().send(API.Account.show, bearer: signedIn.token)
            // A raw 64-byte signature (r‖s) works too.
            let next = try await DeviceKeySteps.challenge(app)
            let raw = try phone.privateKey.signature(for: #require(Data(base64Encoded: next.challenge)))
                .rawRepresentation
            #expect(try await DeviceKeySteps.verify(app, next, signature: raw.base64EncodedString()).0 == 200)
        }
    }

    @Test(.tags(.database)) func oneSignedChallengeSentFiftyTimesInParallelGivesOneToken() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let challenge = try await DeviceKeySteps.challenge(app)
            let signature = try phone.sign(challenge: challenge.challenge)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                // From many addresses, as a distributed replay would come (one address is throttled).
                for index in 0..<50 {
                    group.addTask {
                        try await DeviceKeySteps.verify(app, challenge, signature: signature, from: "10.9.0.\(index)").0
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            // The rest: already used, or held back by the factor guard's bound on attempts in flight.
            #expect(statuses.filter { ![200, 409, 429].contains($0) } == [], "\(statuses)")
            // Replays are no guesses: they leave the factor usable.
            for index in 0..<10 {
                #expect(
                    try await DeviceKeySteps.verify(app, challenge, signature: signature, from: "10.8.0.\(index)").0
                        == 409)
            }
            let next = try await DeviceKeySteps.challenge(app)
            #expect(
                try await DeviceKeySteps.verify(app, next, signature: try phone.sign(challenge: next.challenge)).0
                    == 200)
        }
    }

    @Test func aChallengeExpiresAfterFiveMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let challenge = try await DeviceKeySteps.challenge(app)
            clock.advance(by: 301)
            let (status, body) = try await DeviceKeySteps.verify(
                app, challenge, signature: try phone.sign(challenge: challenge.challenge))
            #expect(status == 401)
            #expect(body.contains(#""code":"expired""#))
            for _ in 0..<6 {
                #expect(
                    try await DeviceKeySteps.verify(
                        app, challenge, signature: try phone.sign(challenge: challenge.challenge)
                    ).0
                        == 401)
            }
            let fresh = try await DeviceKeySteps.challenge(app)
            #expect(
                try await DeviceKeySteps.verify(app, fresh, signature: try phone.sign(challenge: fresh.challenge)).0
                    == 200)
        }
    }

    @Test func aChallengeNeverWorksForAnotherDevice() async throws {
        try await withTestApp { app in
            let (challenge, signature, _) = try await DeviceKeySteps.twoUsersAndAPendingChallenge(app)
            let wrongDevice = try await DeviceKeySteps.verify(app, challenge, signature: signature, device: "ipad-2")
            #expect(wrongDevice.0 == 401 && wrongDevice.1.contains("signature_invalid"))
            #expect(try await DeviceKeySteps.verify(app, challenge, signature: signature).0 == 200, "still unused")
        }
    }

    @Test func aChallengeNeverWorksForAnotherUser() async throws {
        try await withTestApp { app in
            let (challenge, signature, _) = try await DeviceKeySteps.twoUsersAndAPendingChallenge(app)
            let wrongUser = try await DeviceKeySteps.verify(app, challenge, signature: signature, user: "bob")
            #expect(wrongUser.0 == 401 && wrongUser.1.contains("signature_invalid"))
            #expect(try await DeviceKeySteps.verify(app, challenge, signature: signature).0 == 200, "still unused")
        }
    }

    @Test func aSignatureByAnotherKeyIsRefused() async throws {
        try await withTestApp { app in
            let (challenge, signature, _) = try await DeviceKeySteps.twoUsersAndAPendingChallenge(app)
            let otherKey = try await DeviceKeySteps.verify(
                app, challenge, signature: try SoftwareDeviceKey().sign(challenge: challenge.challenge))
            // Anyone can try with a username: the answer says "wrong" and no more (issue S item 3).
            #expect(otherKey.0 == 401 && otherKey.1.contains("signature_invalid"))
            #expect(!otherKey.1.contains("attemptsRemaining"))
            #expect(try await DeviceKeySteps.verify(app, challenge, signature: signature).0 == 200, "still unused")
        }
    }

    @Test func aMalformedKeyIsRefusedAtEnrolmentAndStoresNothing() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var offCurve = [UInt8](repeating: 0, count: 65)
            offCurve[0] = 4
            offCurve[64] = 1
            let badKeys = [
                Data(repeating: 4, count: 33).base64EncodedString(), Data(offCurve).base64EncodedString(),
                P256.Signing.PrivateKey().publicKey.compressedRepresentation.base64EncodedString(),
                P384.Signing.PrivateKey().publicKey.x963Representation.base64EncodedString(),
            ]
            for key in badKeys {
                let (status, body) = try await DeviceKeySteps.post(
                    app, API.DeviceKeys.enroll.path(),
                    ["username": "alice", "publicKey": key, "method": "secureEnclave", "deviceId": "iphone-1"],
                    token: tokens.accessToken.token)
                #expect(status == 422 && body.contains("publicKey"), "\(key)")
            }
            #expect(try await AuditQueries.count(table: "devices", on: app) == 0)
        }
    }

    @Test func aMalformedSignatureIsRefusedAndLeavesTheChallengeUsable() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let challenge = try await DeviceKeySteps.challenge(app)
            for signature in [
                Data(repeating: 1, count: 10).base64EncodedString(), Data(count: 80).base64EncodedString(), "",
            ] {
                let (status, body) = try await DeviceKeySteps.verify(app, challenge, signature: signature)
                #expect(status == 422 && body.contains("signature"), "\(signature)")
            }
            #expect(
                try await DeviceKeySteps.verify(
                    app, challenge, signature: try phone.sign(challenge: challenge.challenge)
                ).0
                    == 200)
        }
    }

    @Test func garbageBase64AndIdentifiersAreRefusedAndChangeNothing() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let enrol = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(),
                ["username": "alice", "publicKey": "not base64 at all!", "method": "secureEnclave", "deviceId": "x"],
                token: tokens.accessToken.token)
            #expect(enrol.0 == 422 && enrol.1.contains("publicKey"))
            #expect(try await AuditQueries.count(table: "devices", on: app) == 0)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let challenge = try await DeviceKeySteps.challenge(app)
            #expect(try await DeviceKeySteps.verify(app, challenge, signature: "%%%").0 == 422)
            let garbageID = try await DeviceKeySteps.post(
                app, API.DeviceKeys.verifySignature.path(),
                ["username": "alice", "deviceId": "iphone-1", "challengeId": "nope", "signature": "AA=="])
            #expect(garbageID.0 == 422 && garbageID.1.contains("challengeId"))
            #expect(
                try await DeviceKeySteps.verify(
                    app, challenge, signature: try phone.sign(challenge: challenge.challenge)
                ).0
                    == 200)
        }
    }

    @Test func enrolmentNeedsTheOwnersTokenAndListingsTheOwnerOrAnAdmin() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            let phone = SoftwareDeviceKey()
            let anonymous = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(),
                ["username": "alice", "publicKey": phone.publicKey, "method": "secureEnclave", "deviceId": "x"])
            #expect(anonymous.0 == 401)
            let forSomeoneElse = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(),
                ["username": "alice", "publicKey": phone.publicKey, "method": "secureEnclave", "deviceId": "x"],
                token: bob.accessToken.token, from: "10.0.0.2")
            #expect(forSomeoneElse.0 == 403)
            _ = try await DeviceKeySteps.enroll(app, token: alice.accessToken.token, phone: phone)

            let client = app.client()
            #expect(
                try await refusal {
                    try await client.send(API.DeviceKeys.devices, "alice", bearer: bob.accessToken.token)
                }.status == 403)
            #expect(
                try await refusal {
                    try await client.send(API.DeviceKeys.status, "iphone-1", bearer: bob.accessToken.token)
                }.status == 404)
            #expect(try await refusal { try await client.send(API.DeviceKeys.devices, "alice") }.status == 401)
            let list = try await client.send(API.DeviceKeys.devices, "alice", bearer: alice.accessToken.token)
            #expect(list.devices.map { $0.deviceId } == ["iphone-1"])
            #expect(list.devices.first?.deviceModel == "iPhone 15 Pro")
            let device = try await client.send(API.DeviceKeys.status, "iphone-1", bearer: alice.accessToken.token)
            #expect(
                device
                    == DeviceStatusResponse(
                        deviceId: "iphone-1", enrolled: true, method: "secureEnclave", hasPublicKey: true,
                        phoneNumber: nil))
        }
    }

    @Test func anActiveAdminSeesAnotherUsersDevicesALockedOneDoesNot() async throws {
        try await withTestApp { app in
            let admin = try await Administrators.adminTokens(app)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(),
                [
                    "username": "bob", "publicKey": SoftwareDeviceKey().publicKey, "method": "secureEnclave",
                    "deviceId": "pixel",
                ],
                token: bob.accessToken.token, from: "10.0.0.2")
            #expect(enrolled.0 == 200)
            let client = app.client()
            #expect(
                try await status {
                    try await client.send(API.DeviceKeys.devices, "bob", bearer: admin.accessToken.token)
                }
                    == 200, "\(API.DeviceKeys.devices.path("bob"))")
            #expect(
                try await status {
                    try await client.send(API.DeviceKeys.status, "pixel", bearer: admin.accessToken.token)
                } == 200, "\(API.DeviceKeys.status.path("pixel"))")
            let alice = try #require(try await app.twofold.users.user(identifier: "alice"))
            #expect(try await app.twofold.users.lock(userID: alice.id, now: Date()))
            #expect(
                try await refusal {
                    try await client.send(API.DeviceKeys.devices, "bob", bearer: admin.accessToken.token)
                }.status == 403)
            #expect(
                try await refusal {
                    try await client.send(API.DeviceKeys.status, "pixel", bearer: admin.accessToken.token)
                }.status == 404)
        }
    }

    @Test func anUnenrolledDeviceKeyStopsWorkingAtOnce() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let pending = try await DeviceKeySteps.challenge(app)
            let request = ["username": "alice", "deviceId": "iphone-1"]
            let (refused, body) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.unenroll.path(), request, token: tokens.accessToken.token)
            #expect(refused == 403 && body.contains("step_up_required"), "removing a factor needs step-up")
            #expect(try await AuditQueries.count(table: "devices", on: app) == 1)
            let keyOnly = try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: phone)
            let (alone, _) = try await DeviceKeySteps.post(app, API.DeviceKeys.unenroll.path(), request, token: keyOnly)
            #expect(alone == 403, "the key does not vouch for its own removal")
            let stepped = try await Accounts.stepUpWithPassword(app, token: keyOnly)
            let (removed, answer) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.unenroll.path(), request, token: stepped)
            #expect(removed == 200, "the password with the key does")
            #expect(
                try DeviceKeySteps.decode(DeviceMessageResponse.self, answer)
                    == DeviceMessageResponse(message: "Device unenrolled"))
            #expect(try await AuditQueries.count(table: "devices", on: app) == 0)
            let (status, refusal) = try await DeviceKeySteps.verify(
                app, pending, signature: try phone.sign(challenge: pending.challenge))
            #expect(status == 401 && refusal.contains("signature_invalid"))
            #expect(try await DeviceKeySteps.challenge(app).method == "smsOTP", "a decoy, like any unknown device")
            // With no second factor left, the password alone signs in again.
            let (login, tokensBody) = try await DeviceKeySteps.post(
                app, API.Auth.login.path(), ["username": "alice", "password": Accounts.password])
            #expect(login == 200 && tokensBody.contains("accessToken"))
            // Nothing is left to vouch for a removal but the password with a fresh email code.
            #expect(
                try await DeviceKeySteps.post(app, API.DeviceKeys.unenroll.path(), request, token: stepped).0 == 403)
        }
    }

    @Test func aSecondDeviceNeedsStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            #expect(try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone).0 == 200)
            clock.advance(by: 6 * 60)
            let (status, body) = try await DeviceKeySteps.enroll(
                app, token: tokens.accessToken.token, phone: SoftwareDeviceKey(), device: "ipad-2")
            #expect(status == 403 && body.contains("step_up_required"))
            // Signing in with the first device's key is a fresh second factor.
            let challenge = try await DeviceKeySteps.challenge(app)
            let signedIn = try DeviceKeySteps.decode(
                DeviceTokenResponse.self,
                try await DeviceKeySteps.verify(
                    app, challenge, signature: try phone.sign(challenge: challenge.challenge)
                ).1)
            #expect(
                try await DeviceKeySteps.enroll(
                    app, token: signedIn.token, phone: SoftwareDeviceKey(), device: "ipad-2"
                ).0 == 200
            )
        }
    }

    @Test func reEnrollingOrUpgradingRetiresTheOldKeyAtOnce() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let old = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: old)
            let pending = try await DeviceKeySteps.challenge(app)
            // Scenario 9: re-enrol with a new key (a biometric key replaced by a passcode key, say),
            // after a step-up with the old one.
            let new = SoftwareDeviceKey()
            #expect(try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: new).0 == 403)
            let stepped = try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: old)
            #expect(try await DeviceKeySteps.enroll(app, token: stepped, phone: new).0 == 200)
            #expect(
                try await DeviceKeySteps.verify(app, pending, signature: try old.sign(challenge: pending.challenge)).0
                    != 200)
            let fresh = try await DeviceKeySteps.challenge(app)
            #expect(
                try await DeviceKeySteps.verify(app, fresh, signature: try old.sign(challenge: fresh.challenge)).0
                    == 401)
            let again = try await DeviceKeySteps.challenge(app)
            let (signedIn, signedInBody) = try await DeviceKeySteps.verify(
                app, again, signature: try new.sign(challenge: again.challenge))
            #expect(signedIn == 200)
            // The session that set the new key did not prove it: another key change needs another proof.
            let third = SoftwareDeviceKey()
            let upgrade = ["username": "alice", "deviceId": "iphone-1", "publicKey": third.publicKey]
            #expect(try await DeviceKeySteps.post(app, API.DeviceKeys.upgrade.path(), upgrade, token: stepped).0 == 403)
            // Scenario 10: upgrade switches to yet another key, from a session the new key signed in.
            let (upgraded, body) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.upgrade.path(), upgrade,
                token: try DeviceKeySteps.decode(DeviceTokenResponse.self, signedInBody).token)
            #expect(upgraded == 200)
            #expect(
                try DeviceKeySteps.decode(DeviceMethodResponse.self, body)
                    == DeviceMethodResponse(method: "secureEnclave", message: "Upgraded to Secure Enclave MFA"))
            let last = try await DeviceKeySteps.challenge(app)
            #expect(
                try await DeviceKeySteps.verify(app, last, signature: try new.sign(challenge: last.challenge)).0 == 401)
        }
    }

    @Test func theDeviceKeyCompletesAPasswordLoginOnlyWithThatFlowsChallenge() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            let (status, body) = try await DeviceKeySteps.post(
                app, API.Auth.login.path(), ["username": "alice", "password": Accounts.password])
            #expect(status == 200)
            let flow = try DeviceKeySteps.decode(LoginChallengeResponse.self, body)
            // The key, and approving on the phone that holds it (issue Z).
            #expect(flow.availableMethods == [.deviceKey, .push])

            let (issued, challengeBody) = try await DeviceKeySteps.post(
                app, API.SecondStep.deviceKeyChallenge.path(), ["otpFlowId": flow.otpFlowId, "deviceId": "iphone-1"])
            #expect(issued == 200)
            let challenge = try DeviceKeySteps.decode(DeviceChallengeResponse.self, challengeBody)
            let signature = try phone.sign(challenge: challenge.challenge)
            // A login-flow challenge is not a sign-in challenge, and a sign-in challenge does not
            // complete the flow.
            #expect(try await DeviceKeySteps.verify(app, challenge, signature: signature).0 == 401)
            let signIn = try await DeviceKeySteps.challenge(app)
            let wrongPurpose = try await DeviceKeySteps.send(
                app, .POST, API.SecondStep.verifyLogin.path(),
                MFAVerifyLoginRequest(
                    method: .deviceKey, otpFlowId: flow.otpFlowId, deviceId: "iphone-1",
                    challengeId: signIn.challengeId, signature: try phone.sign(challenge: signIn.challenge)))
            #expect(wrongPurpose.0 == 401 && wrongPurpose.1.contains("signature_invalid"))
            let missing = try await DeviceKeySteps.send(
                app, .POST, API.SecondStep.verifyLogin.path(),
                MFAVerifyLoginRequest(method: .deviceKey, otpFlowId: flow.otpFlowId))
            #expect(missing.0 == 422)

            let (completed, answer) = try await DeviceKeySteps.send(
                app, .POST, API.SecondStep.verifyLogin.path(),
                MFAVerifyLoginRequest(
                    method: .deviceKey, otpFlowId: flow.otpFlowId, deviceId: "iphone-1",
                    challengeId: challenge.challengeId, signature: signature))
            #expect(completed == 200, "\(answer)")
            let session = try DeviceKeySteps.decode(SecondStepResponse.self, answer)
            let sessions = try await app.client().send(API.Auth.sessions, bearer: session.accessToken.token)
            let methods = try #require(sessions.sessions.first { $0.current == true }).methods
            #expect(methods == ["pwd", "hwk", "mfa"])
            let replay = try await DeviceKeySteps.send(
                app, .POST, API.SecondStep.verifyLogin.path(),
                MFAVerifyLoginRequest(
                    method: .deviceKey, otpFlowId: flow.otpFlowId, deviceId: "iphone-1",
                    challengeId: challenge.challengeId, signature: signature))
            #expect(replay.0 != 200, "the flow and the challenge are used up")
        }
    }

    @Test func aDeviceThatLostItsSecurityIsDowngradedAuditedAndTheUserTold() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: recent, phone: phone)
            _ = try await Codes.deliverAll(app, clock: clock)
            let pending = try await DeviceKeySteps.challenge(app)
            let (status, body) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.downgrade.path(), ["username": "alice", "deviceId": "iphone-1"], token: recent)
            #expect(status == 200)
            #expect(
                try DeviceKeySteps.decode(DeviceMethodResponse.self, body)
                    == DeviceMethodResponse(method: "smsOTP", message: "Downgraded to SMS OTP"))
            #expect(
                try await DeviceKeySteps.verify(app, pending, signature: try phone.sign(challenge: pending.challenge)).0
                    != 200)
            #expect(try await DeviceKeySteps.challenge(app).method == "smsOTP")
            let told = try await Codes.deliverAll(app, clock: clock)
            #expect(Set(told.map(\.channel.rawValue)) == ["sms", "email"], "the user hears of it on both channels")
            #expect(try await AuditQueries.count(type: "factor.removed", on: app) == 1)

            // The SMS fallback signs in with a code to the number on file.
            clock.advance(by: 61)
            let (sent, answer) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "alice", "phoneNumber": "+14155550123"])
            #expect(sent == 200)
            #expect(
                try DeviceKeySteps.decode(RequestOTPResponse.self, answer)
                    == RequestOTPResponse(message: "OTP sent to +•••••••0123", expiresIn: 300))
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).first)
            #expect(code.destination == "+14155550123")
            let (verified, tokenBody) = try await DeviceKeySteps.post(
                app, API.DeviceKeys.verifyOTP.path(), ["username": "alice", "otp": code.code])
            #expect(verified == 200)
            #expect(try DeviceKeySteps.decode(DeviceTokenResponse.self, tokenBody).success)
        }
    }

    @Test func requestOTPAnswersTheSameForUnknownUsersAndSendsOnlyToTheNumberOnFile() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            // A key device's owner never asked for SMS sign-in: nothing is sent for it.
            _ = try await DeviceKeySteps.enroll(app, token: recent, phone: SoftwareDeviceKey())
            _ = try await Codes.deliverAll(app, clock: clock)
            clock.advance(by: 61)
            #expect(
                try await DeviceKeySteps.post(app, API.DeviceKeys.requestOTP.path(), ["username": "alice"]).0 == 200)
            #expect(try await Codes.deliverMessages(app, clock: clock).isEmpty, "no SMS device, no SMS")
            let smsDevice = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: recent)
            #expect(smsDevice.0 == 200, "\(smsDevice.1)")
            clock.advance(by: 61)
            let known = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "alice", "phoneNumber": "+15005550006"])
            let unknown = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "nobody", "phoneNumber": "+15005550006"])
            #expect(known.0 == 200 && known == unknown, "\(known) vs \(unknown)")
            let sent = try await Codes.deliverMessages(app, clock: clock)
            #expect(sent.map(\.destination) == ["+14155550123"], "never the number in the request")
            let inCooldown = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "alice", "phoneNumber": "+15005550006"])
            #expect(inCooldown == unknown, "the cooldown does not tell either")
        }
    }
    @Test func theSMSFallbackCodeWorksOnceCountsWrongTriesAndBadInputChangesNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            _ = try await DeviceKeySteps.enroll(app, token: tokens.accessToken.token, phone: phone)
            // No phone on file: a downgrade would leave the device with nothing to sign in with.
            let keyAndPassword = try await Accounts.stepUpWithPassword(
                app, token: try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: phone))
            let refused = try await DeviceKeySteps.post(
                app, API.DeviceKeys.downgrade.path(), ["username": "alice", "deviceId": "iphone-1"],
                token: keyAndPassword)
            #expect(refused.0 == 409)
            #expect(try await DeviceKeySteps.challenge(app).method == "secureEnclave", "unchanged")

            // The device key is a factor now: adding SMS codes needs a recent one, from another session.
            let keySession = try await DeviceKeySteps.stepUp(app, token: tokens.accessToken.token, phone: phone)
            _ = try await Codes.enableSMS(app, token: keySession, clock: clock)
            let smsDevice = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: keySession
            )
            #expect(smsDevice.0 == 200, "\(smsDevice.1)")
            _ = try await Codes.deliverAll(app, clock: clock)
            clock.advance(by: 61)
            let malformed = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "alice", "phoneNumber": "12"])
            #expect(malformed.0 == 422)
            #expect(try await Codes.deliverMessages(app, clock: clock).isEmpty, "nothing sent")
            #expect(
                try await DeviceKeySteps.post(app, API.DeviceKeys.requestOTP.path(), ["username": "alice"]).0 == 200)
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
            let wrong = try await DeviceKeySteps.post(
                app, API.DeviceKeys.verifyOTP.path(),
                ["username": "alice", "otp": code == "000000" ? "000001" : "000000"])
            // Anyone can ask with a username: a wrong code tells nothing more than "wrong".
            #expect(wrong.0 == 401 && wrong.1.contains("invalid_code") && !wrong.1.contains("attemptsRemaining"))
            #expect(
                try await DeviceKeySteps.post(app, API.DeviceKeys.verifyOTP.path(), ["username": "alice", "otp": code])
                    .0 == 200)
            #expect(
                try await DeviceKeySteps.post(app, API.DeviceKeys.verifyOTP.path(), ["username": "alice", "otp": code])
                    .0 == 401,
                "once")
        }
    }

    @Test func anUnknownUserOrDeviceGetsAChallengeOfTheSameShape() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let clock = TestClock()
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: recent)
            #expect(enrolled.0 == 200)
            let smsDevice = try await DeviceKeySteps.challenge(app, device: "old-phone")
            let unknownDevice = try await DeviceKeySteps.challenge(app, device: "someone-elses")
            let unknownUser = try await DeviceKeySteps.challenge(app, user: "nobody")
            for answer in [smsDevice, unknownDevice, unknownUser] {
                #expect(answer.method == "smsOTP" && answer.expiresIn == 300)
                #expect(
                    Data(base64Encoded: answer.challenge)?.count == 32 && UUID(uuidString: answer.challengeId) != nil)
            }
            #expect(try await AuditQueries.count(table: "device_challenges", on: app) == 0, "nothing stored for them")
        }
    }
}
