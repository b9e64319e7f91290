import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Seed 004's scenarios that involve the server, over HTTP against the built binary, with P-256
/// keys made here and DER signatures as `SecKeyCreateSignature` gives them; SMS codes travel
/// through the signed webhook to a local gateway. On SQLite and on PostgreSQL.
@Suite(.serialized) struct DeviceKeyEndToEndTests {
    @Test(arguments: ["sqlite", "postgres"])
    func seedScenariosOneToTen(_ database: String) async throws {
        guard let python = TestPython.find(),
            var environment = CodeSignIns.databaseEnvironment(database)
        else { return }
        let gatewayPort = SMTPSink.freePort()
        environment.merge([
            "TWOFOLD_SMS_PROVIDER": "webhook", "TWOFOLD_SMS_WEBHOOK_URL": "http://127.0.0.1:\(gatewayPort)/sms",
            "TWOFOLD_SMS_WEBHOOK_SECRET": "gateway-secret", "TWOFOLD_EMAIL_PROVIDER": "console",
        ]) { $1 }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-devices")
        defer { try? FileManager.default.removeItem(at: root) }
        let gateway = try SMSGateway(python: python, port: gatewayPort, secret: "gateway-secret")
        defer { gateway.stop() }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await DeviceKeyScenarios(server: server, gateway: gateway).run()
    }
}

/// The scenarios, against one running server and SMS gateway.
struct DeviceKeyScenarios {
    let server: ServerProcess
    let gateway: SMSGateway

    var client: APIClient { server.client }

    /// Registers `name`, signs in with the password and turns on SMS codes to `phone` (the code
    /// read from the gateway), so the account has a verified number on file; then signs in again
    /// with the password and an SMS code and returns that session's token (a factor never
    /// steps up the session that added it, and adding a device now needs a recent one).
    func signUpWithPhone(_ name: String, phone: String) async throws -> String {
        let tokens = try await TokenChecks.signIn(server, as: name)
        let before = try gateway.messages().count
        _ = try await client.send(
            API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: phone), bearer: tokens.accessToken.token)
        let code = try #require(try await gateway.nextMessage(after: before)?.code)
        _ = try await client.send(API.TwoFactor.smsVerify, CodeRequest(code: code), bearer: tokens.accessToken.token)
        return try await signInWithPasswordAndSMS(name)
    }

    /// The password, then the SMS code sent at login; the session's access token.
    func signInWithPasswordAndSMS(_ name: String) async throws -> String {
        let before = try gateway.messages().count
        let flow = try await client.send(
            API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
        ).challenge
        let code = try #require(try await gateway.nextMessage(after: before)?.code)
        let completed = try await client.send(
            API.SecondStep.verifyOTP, OTPVerifyRequest(otpFlowId: flow.otpFlowId, code: code))
        return completed.accessToken.token
    }

    /// Scenario 6: initiate, sign the challenge, verify; the Twofold access token.
    func signIn(_ name: String, device: String, key: SoftwareDeviceKey) async throws -> String {
        let challenge = try await client.send(API.DeviceKeys.initiate, DeviceRequest(username: name, deviceId: device))
        #expect(challenge.method == "secureEnclave")
        let verified = try await client.send(
            API.DeviceKeys.verifySignature,
            VerifySignatureRequest(
                username: name, deviceId: device, challengeId: challenge.challengeId,
                signature: try key.sign(challenge: challenge.challenge)))
        return verified.token
    }

    /// Scenario 7: the SMS fallback; the Twofold access token.
    func signInWithSMS(_ name: String, phone: String) async throws -> String {
        let before = try gateway.messages().count
        _ = try await client.send(API.DeviceKeys.requestOTP, RequestOTPRequest(username: name, phoneNumber: phone))
        let message = try #require(try await gateway.nextMessage(after: before))
        #expect(message.to == phone)
        let verified = try await client.send(
            API.DeviceKeys.verifyOTP, DeviceVerifyOTPRequest(username: name, otp: try #require(message.code)))
        return verified.token
    }

    /// Step-up with the device key; the new access token.
    func stepUp(_ token: String, device: String, key: SoftwareDeviceKey) async throws -> String {
        let challenge = try await client.send(
            API.Auth.stepUpDeviceKeyChallenge, StepUpDeviceKeyChallengeRequest(deviceId: device), bearer: token)
        let stepped = try await client.send(
            API.Auth.stepUp,
            StepUpRequest(
                method: .deviceKey, deviceId: device, challengeId: challenge.challengeId,
                signature: try key.sign(challenge: challenge.challenge)),
            bearer: token)
        return stepped.accessToken.token
    }

    /// The password re-entered on `token`'s session; the new access token.
    func stepUpWithPassword(_ token: String) async throws -> String {
        let stepped = try await client.send(
            API.Auth.stepUp, StepUpRequest(method: .password, password: TestAccounts.password), bearer: token)
        return stepped.accessToken.token
    }

    /// A fresh code to the verified phone on `token`'s session; the new access token.
    func stepUpWithSMS(_ token: String, phone: String) async throws -> String {
        let before = try gateway.messages().count
        _ = try await client.send(API.Auth.stepUpSend, StepUpSendRequest(method: .sms), bearer: token)
        let message = try #require(try await gateway.nextMessage(after: before))
        #expect(message.to == phone)
        let stepped = try await client.send(
            API.Auth.stepUp, StepUpRequest(method: .sms, code: try #require(message.code)), bearer: token)
        return stepped.accessToken.token
    }

    func run() async throws {
        let client = self.client
        let alicePhone = "+14155550142"
        let aliceToken = try await signUpWithPhone("alice", phone: alicePhone)

        // Enrolment needs the owner's token.
        let faceID = SoftwareDeviceKey()
        let enrol = DeviceEnrollRequest(
            username: "alice", publicKey: faceID.publicKey, method: "secureEnclave", deviceId: "iphone-1",
            deviceModel: "iPhone 15 Pro")
        let anonymous = await refusal { try await client.send(API.DeviceKeys.enroll, enrol) }
        #expect(anonymous?.status == 401, "\(String(describing: anonymous))")

        // Scenarios 1–4: the app registers a key (biometric, or passcode after a declined
        // biometric prompt, or passcode only): to the server each is a P-256 key. The first
        // device needs only the owner's token.
        let enrolled = try await client.send(API.DeviceKeys.enroll, enrol, bearer: aliceToken)
        #expect(
            enrolled
                == DeviceEnrollResponse(
                    deviceId: "iphone-1", method: "secureEnclave", message: "Device enrolled successfully"))
        // A key that is not a P-256 point is refused and stores nothing.
        var badKey = enrol
        badKey.publicKey = Data(repeating: 4, count: 65).base64EncodedString()
        badKey.deviceId = "broken"
        let notAPoint = await refusal { try await client.send(API.DeviceKeys.enroll, badKey, bearer: aliceToken) }
        #expect(notAPoint?.status == 422, "\(String(describing: notAPoint))")

        // Seed 001: the device PIN goes over HTTP and never into the log.
        let pin = "739146285017"
        _ = try await client.send(
            API.DeviceFactors.setPIN, "iphone-1", DevicePINChangeRequest(newPin: pin), bearer: aliceToken)
        _ = try await client.send(
            API.DeviceFactors.verifyPIN, "iphone-1", DevicePINRequest(pin: pin), bearer: aliceToken)
        let wrongPIN = await refusal {
            try await client.send(
                API.DeviceFactors.verifyPIN, "iphone-1", DevicePINRequest(pin: "739146285018"), bearer: aliceToken)
        }
        #expect(wrongPIN?.status == 401, "\(String(describing: wrongPIN))")

        // Scenario 6: challenge, signature, token, which works as a Twofold access token.
        let signedIn = try await signIn("alice", device: "iphone-1", key: faceID)
        _ = try await client.send(API.Account.show, bearer: signedIn)
        // A signed challenge works once, even sent many times at once.
        let challenge = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: "alice", deviceId: "iphone-1"))
        let signed = VerifySignatureRequest(
            username: "alice", deviceId: "iphone-1", challengeId: challenge.challengeId,
            signature: try faceID.sign(challenge: challenge.challenge))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await client.exchange(API.DeviceKeys.verifySignature, signed).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
        // And the password login now asks for the device key as its second step.
        let flow = try await client.send(
            API.Auth.login, LoginRequest(username: "alice", password: TestAccounts.password)
        ).challenge
        #expect(flow.availableMethods.first == .deviceKey && flow.availableMethods.contains(.sms))
        let flowChallenge = try await client.send(
            API.SecondStep.deviceKeyChallenge,
            DeviceKeyChallengeRequest(deviceId: "iphone-1", otpFlowId: flow.otpFlowId))
        _ = try await client.send(
            API.SecondStep.verifyLogin,
            MFAVerifyLoginRequest(
                method: .deviceKey, otpFlowId: flow.otpFlowId, deviceId: "iphone-1",
                challengeId: flowChallenge.challengeId, signature: try faceID.sign(challenge: flowChallenge.challenge)))

        // Scenario 10: switch to a passcode-only key; the old key stops working at once.
        let passcode = SoftwareDeviceKey()
        let switchToken = try await stepUp(signedIn, device: "iphone-1", key: faceID)
        _ = try await client.send(
            API.DeviceKeys.upgrade,
            DeviceUpgradeRequest(username: "alice", deviceId: "iphone-1", publicKey: passcode.publicKey),
            bearer: switchToken)
        let stale = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: "alice", deviceId: "iphone-1"))
        let refused = await refusal {
            try await client.send(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: "alice", deviceId: "iphone-1", challengeId: stale.challengeId,
                    signature: try faceID.sign(challenge: stale.challenge)))
        }
        #expect(refused?.status == 401 && refused?.code == .signatureInvalid, "\(String(describing: refused))")
        let afterSwitch = try await signIn("alice", device: "iphone-1", key: passcode)

        // Scenario 8: the device lost its security, and its key with it. The key cannot vouch for
        // its own removal (issue T): the app re-enters the password and a fresh code to the
        // verified phone, then downgrades to SMS; the server tells the user by SMS (and email).
        let device = DeviceRequest(username: "alice", deviceId: "iphone-1")
        let keyAlone = await refusal { try await client.send(API.DeviceKeys.downgrade, device, bearer: afterSwitch) }
        #expect(keyAlone?.status == 403 && keyAlone?.code == .stepUpRequired, "\(String(describing: keyAlone))")
        let reproven = try await stepUpWithSMS(try await stepUpWithPassword(afterSwitch), phone: alicePhone)
        let before = try gateway.messages().count
        _ = try await client.send(API.DeviceKeys.downgrade, device, bearer: reproven)
        let notice = try #require(
            try await gateway.nextMessage(after: before) { $0.message.contains("now signs in with SMS codes") })
        #expect(notice.to == alicePhone)
        let nowSMS = try await client.send(API.DeviceKeys.initiate, device)
        #expect(nowSMS.method == "smsOTP")

        // Scenario 7 on the downgraded device, then scenario 9: security is back, a new key. A
        // session that proved only an SMS code (what a SIM swap hands over) cannot put a key in
        // (issue S item 2, issue T); the app re-enters the password, and the SMS code and the
        // password together can.
        let smsToken = try await signInWithSMS("alice", phone: alicePhone)
        let restored = SoftwareDeviceKey()
        let upgrade = DeviceUpgradeRequest(username: "alice", deviceId: "iphone-1", publicKey: restored.publicKey)
        let smsOnly = await refusal { try await client.send(API.DeviceKeys.upgrade, upgrade, bearer: smsToken) }
        #expect(smsOnly?.status == 403 && smsOnly?.code == .stepUpRequired, "\(String(describing: smsOnly))")
        _ = try await client.send(API.DeviceKeys.upgrade, upgrade, bearer: try await stepUpWithPassword(smsToken))
        _ = try await signIn("alice", device: "iphone-1", key: restored)

        // Scenario 5: a phone without a passcode enrols for SMS only, and signs in with SMS
        // (scenario 7). An SMS-only enrolment needs a verified number on file.
        let bobPhone = "+14155550177"
        let bobToken = try await TokenChecks.signIn(server, as: "bob").accessToken.token
        let smsEnrol = DeviceEnrollRequest(
            username: "bob", phoneNumber: bobPhone, method: "smsOTP", deviceId: "old-iphone")
        let unverified = await refusal { try await client.send(API.DeviceKeys.enroll, smsEnrol, bearer: bobToken) }
        #expect(unverified?.status == 409, "\(String(describing: unverified))")
        let bobVerified = try await signUpWithPhone("bob", phone: bobPhone)
        _ = try await client.send(API.DeviceKeys.enroll, smsEnrol, bearer: bobVerified)
        let bobChallenge = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: "bob", deviceId: "old-iphone"))
        #expect(bobChallenge.method == "smsOTP")
        _ = try await signInWithSMS("bob", phone: bobPhone)

        // Devices are listed for their owner only.
        let notTheOwner = await refusal { try await client.send(API.DeviceKeys.devices, "alice", bearer: bobVerified) }
        #expect(notTheOwner?.status == 403, "\(String(describing: notTheOwner))")
        let listing = try await client.send(API.DeviceKeys.devices, "alice", bearer: smsToken)
        #expect(listing.devices.map(\.deviceId) == ["iphone-1"])

        // No code, key or full number reaches the log.
        let log = self.server.log
        for message in try gateway.messages() {
            if let code = message.code { #expect(!log.contains(code)) }
        }
        #expect(!log.contains(alicePhone) && !log.contains(bobPhone))
        #expect(!log.contains(pin) && !log.contains("739146285018"))
    }
}
