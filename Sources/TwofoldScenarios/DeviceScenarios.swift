import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldDevice

/// The scenarios, in their seeds' order.
enum Scenarios {
    static let all: [Scenario] = device + [seed001, seed000, push]

    /// Seed 004's "Testing Scenarios to Implement", 1 to 10.
    static let device: [Scenario] = [
        Scenario(number: 1, name: "Happy path (biometric)", run: happyPath),
        Scenario(number: 2, name: "User declines biometric permission", run: declinesBiometrics),
        Scenario(number: 3, name: "User chooses passcode only", run: choosesPasscode),
        Scenario(number: 4, name: "No biometrics enrolled", run: noBiometricsEnrolled),
        Scenario(number: 5, name: "No device security", run: noDeviceSecurity),
        Scenario(number: 6, name: "Authentication success", run: authenticationSuccess),
        Scenario(number: 7, name: "Authentication with SMS fallback", run: smsFallback),
        Scenario(number: 8, name: "Device security removed after enrollment", run: securityRemoved),
        Scenario(number: 9, name: "Re-enrollment after security restored", run: securityRestored),
        Scenario(number: 10, name: "Method switching", run: methodSwitching),
    ]

    // MARK: Helpers

    /// Records the phone's capability as the app reads it on launch, checked against `expected`.
    static func launch(_ account: ScenarioAccount, expecting expected: DeviceCapability) async throws {
        let capabilities = await account.phone.capabilities()
        try account.log.check(
            "launch: read the device's security", capabilities.capability == expected,
            "\(capabilities.capability.rawValue) (biometry \(capabilities.biometry.rawValue), "
                + "enrolled \(capabilities.biometryEnrolled), passcode \(capabilities.passcodeSet))")
    }

    /// The app's own check at launch, with no button pressed (`DeviceKeyFlows.securityChange`,
    /// what `DeviceSettingsModel.check()` runs): what the phone can do now against how the server
    /// lists it.
    static func notice(_ account: ScenarioAccount, expecting expected: DeviceSecurityChange) async throws {
        let method = try await account.serverMethod()
        let noticed = await account.flows.securityChange(enrolledAs: method, username: account.username)
        try account.log.check("the app notices on its own", noticed == expected, words(noticed))
    }

    static func words(_ change: DeviceSecurityChange?) -> String {
        switch change {
        case .securityRemoved?: "security removed: the key is gone (critical alert, text message codes offered)"
        case .keyLost?: "the key was lost: set it up again"
        case .canUpgrade(let biometry)?: "security is back: \"Upgrade to biometric security?\" (\(biometry.rawValue))"
        case nil: "nothing changed"
        }
    }

    /// Enrols with `protection` and checks the outcome is `expected`.
    static func enroll(
        _ account: ScenarioAccount, _ action: String, protection: KeyProtection?, expecting expected: DeviceEnrolment
    ) async throws {
        let outcome = try await account.flows.enroll(username: account.username, protection: protection)
        try account.log.check(action, outcome == expected, words(outcome), reason: reason(outcome))
    }

    static func words(_ enrolment: DeviceEnrolment) -> String {
        switch enrolment {
        case .enrolled(let protection): "key registered (\(protection.rawValue))"
        case .enrolledForSMS: "enrolled for SMS codes"
        case .offerPasscode: "declined: offer the passcode"
        case .blocked(let words): "blocked: \(words)"
        case .failed: "refused by the phone"
        }
    }

    /// A device sign-in's outcome as the log shows it (no user record: it holds a phone number).
    static func words(_ signIn: DeviceKeyFlows.SignIn) -> String {
        switch signIn {
        case .signedIn(let user): "signed in as \(user.username)"
        case .useSMS(let failure): "the phone could not sign (\(failure)): offer SMS"
        case .smsCode: "the server asks for an SMS code"
        case .refused(let code, let words): "refused: \(code?.rawValue ?? "no code"): \(words)"
        }
    }

    static func reason(_ enrolment: DeviceEnrolment) -> String? {
        switch enrolment {
        case .offerPasscode(let failure), .failed(let failure): failure.logText
        case .blocked: DeviceAuthFailure.passcodeNotSet.logText
        case .enrolled, .enrolledForSMS: nil
        }
    }

    // MARK: Seed 004

    static func happyPath(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await launch(account, expecting: .biometricsAvailable)
        try await account.expectServerDevice(nil)
        try await enroll(
            account, "tap \"Enroll with Face ID\"", protection: .biometric, expecting: .enrolled(.biometric))
        let prompts = await account.phone.prompts
        try account.log.check("the Face ID prompt", prompts == [.biometric], "\(prompts.map(\.rawValue))")
        try await account.expectServerDevice("secureEnclave")
        _ = try await account.signInWithKey(expecting: .biometric)
    }

    static func declinesBiometrics(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        await account.phone.cancelNextPrompt()
        try await enroll(
            account, "tap \"Enroll with Face ID\"; the person taps \"Don't Allow\"", protection: .biometric,
            expecting: .offerPasscode(.userCancel))
        let kept = await account.phone.hasKey(tag: account.tag)
        try account.log.check("the declined key", !kept, kept ? "kept on the phone" : "not kept")
        try await account.expectServerDevice(nil)
        try await enroll(
            account, "\"Use Passcode Instead?\" Yes", protection: .passcode, expecting: .enrolled(.passcode))
        try await account.expectServerDevice("secureEnclave")
        _ = try await account.signInWithKey(expecting: .passcode)
    }

    static func choosesPasscode(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await launch(account, expecting: .biometricsAvailable)
        try await enroll(account, "tap \"Use Passcode Only\"", protection: .passcode, expecting: .enrolled(.passcode))
        try await account.expectServerDevice("secureEnclave")
        // The key is the passcode's: biometrics locked out change nothing for it.
        await account.phone.lockOutBiometry()
        account.log.record("biometrics lock out", "the passcode key is not behind them")
        _ = try await account.signInWithKey(expecting: .passcode)
    }

    static func noBiometricsEnrolled(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.biometryNotEnrolled)
        try await launch(account, expecting: .passcodeOnly)
        try await enroll(
            account, "ask for a Face ID key anyway", protection: .biometric, expecting: .failed(.biometryNotEnrolled))
        try await account.expectServerDevice(nil)
        try await enroll(
            account, "\"Passcode Authentication\": enrol", protection: nil, expecting: .enrolled(.passcode))
        try await account.expectServerDevice("secureEnclave")
    }

    static func noDeviceSecurity(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.noSecurity)
        try await launch(account, expecting: .none)
        try await enroll(
            account, "enrol a key", protection: nil, expecting: .blocked("Please set up device passcode in Settings"))
        try await account.expectServerDevice(nil)
        // The SMS-only registration needs a verified number.
        try await account.verifyPhone()
        let outcome = try await account.flows.enrollForSMS(username: account.username)
        try account.log.check("\"SMS only\" registration", outcome == .enrolledForSMS, words(outcome))
        try await account.expectServerDevice("smsOTP")
    }

    static func authenticationSuccess(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await enroll(account, "enrol with Face ID", protection: .biometric, expecting: .enrolled(.biometric))
        let method = try await account.serverMethod()
        try account.log.check("enter the username: the server's challenge", method == "secureEnclave", method)
        _ = try await account.signInWithKey(expecting: .biometric)

        // A signed challenge works once: the same signature sent again is refused.
        let client = context.client
        let challenge = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: account.username, deviceId: account.deviceID))
        let signature = try await account.phone.sign(
            Data(base64Encoded: challenge.challenge) ?? Data(), tag: account.tag)
        let signed = VerifySignatureRequest(
            username: account.username, deviceId: account.deviceID, challengeId: challenge.challengeId,
            signature: signature.base64EncodedString())
        _ = try await client.send(API.DeviceKeys.verifySignature, signed)
        account.log.record("send the signature", "the server signed the device in")
        try await expectRefusal(account, "send the same signature again") {
            _ = try await client.send(API.DeviceKeys.verifySignature, signed)
        }
        // A signature over other bytes is refused.
        let other = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: account.username, deviceId: account.deviceID))
        let wrong = try await account.phone.sign(Data("not the challenge".utf8), tag: account.tag)
        try await expectRefusal(account, "sign other bytes than the challenge") {
            _ = try await client.send(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: account.username, deviceId: account.deviceID, challengeId: other.challengeId,
                    signature: wrong.base64EncodedString()))
        }
    }

    /// Checks the server refuses what `call` sends (with 4xx).
    static func expectRefusal(
        _ account: ScenarioAccount, _ action: String, _ call: () async throws -> Void
    ) async throws {
        do {
            try await call()
            try account.log.check(action, false, "the server took it")
        } catch let error as APIError {
            try account.log.check(action, (400..<500).contains(error.status), "refused: \(error)")
        }
    }

    static func smsFallback(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.noSecurity)
        try await account.verifyPhone()
        _ = try await account.flows.enrollForSMS(username: account.username)
        try await account.expectServerDevice("smsOTP")
        let signedOut = account.signedOut()
        let method = try await account.serverMethod()
        try account.log.check("enter the username: the server's answer", method == "smsOTP", method)
        let code = try await context.inbox.code(to: account.phoneNumber) {
            _ = try await signedOut.requestSMSCode(username: account.username)
        }
        account.log.record("the server sends a code", "a code reached \(PhoneMask.masked(account.phoneNumber))")
        let wrongCode = String(code.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
        let refused = try await signedOut.signIn(username: account.username, smsCode: wrongCode)
        guard case .refused = refused else {
            try account.log.check("enter a wrong code", false, words(refused))
            return
        }
        account.log.record("enter a wrong code", words(refused))
        let outcome = try await signedOut.signIn(username: account.username, smsCode: code)
        guard case .signedIn(let user) = outcome else {
            try account.log.check("enter the code", false, words(outcome))
            return
        }
        try account.log.check("enter the code", user.username == account.username, "signed in as \(user.username)")
    }

    static func securityRemoved(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await account.verifyPhone()
        try await enroll(account, "enrol with Face ID", protection: .biometric, expecting: .enrolled(.biometric))
        let keySession = try await account.signInWithKey(expecting: .biometric)
        await account.phone.removeSecurity()
        account.log.record("Settings: disable Face ID, remove the passcode", "the phone's keys are gone")
        try await launch(account, expecting: .none)
        try await notice(account, expecting: .securityRemoved)
        let signIn = try await account.signedOut().signIn(username: account.username)
        try account.log.check(
            "the critical alert: the key cannot sign", signIn == .useSMS(.passcodeNotSet), words(signIn),
            reason: DeviceAuthFailure.passcodeNotSet.logText)
        // The app downgrades on the session it has; the key cannot vouch for its own removal.
        try await account.flows(on: keySession).downgrade(username: account.username)
        account.log.record("downgrade to SMS and tell the server", "the server took it")
        try await account.expectServerDevice("smsOTP")
        let method = try await account.serverMethod()
        try account.log.check("the server's next challenge", method == "smsOTP", method)
    }

    static func securityRestored(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.noSecurity)
        try await account.verifyPhone()
        _ = try await account.flows.enrollForSMS(username: account.username)
        try await account.expectServerDevice("smsOTP")
        await account.phone.set(DeviceCapabilities.faceID)
        account.log.record("Settings: set a passcode and Face ID", "the phone has security again")
        try await launch(account, expecting: .biometricsAvailable)
        try await notice(account, expecting: .canUpgrade(.faceID))
        // The user signs in with SMS, then accepts "Upgrade to biometric security?".
        let session = SessionManager(client: context.client, store: MemoryTokenStore())
        let flows = account.flows(on: session)
        let code = try await context.inbox.code(to: account.phoneNumber) {
            _ = try await flows.requestSMSCode(username: account.username)
        }
        let signedIn = try await flows.signIn(username: account.username, smsCode: code)
        guard case .signedIn = signedIn else {
            try account.log.check("sign in with an SMS code", false, words(signedIn))
            return
        }
        account.log.record("sign in with an SMS code", "signed in")
        let outcome = try await flows.upgrade(username: account.username, protection: .biometric)
        try account.log.check(
            "\"Upgrade to biometric security?\" Yes", outcome == .enrolled(.biometric), words(outcome))
        try await account.expectServerDevice("secureEnclave")
        _ = try await account.signInWithKey(expecting: .biometric)
    }

    static func methodSwitching(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await enroll(account, "enrol with Face ID", protection: .biometric, expecting: .enrolled(.biometric))
        let oldKey = try account.log.require(
            "keep the Face ID key's public half", await account.phone.savedKeys()[account.tag], "kept")
        let keySession = try await account.signInWithKey(expecting: .biometric)
        let outcome = try await account.flows(on: keySession).upgrade(username: account.username, protection: .passcode)
        try account.log.check("tap \"Switch to Passcode Only\"", outcome == .enrolled(.passcode), words(outcome))
        let now = await account.phone.savedKeys()[account.tag]
        try account.log.check(
            "the old key deleted, a passcode key in its place",
            now?.protection == .passcode && now?.privateKey != oldKey.privateKey,
            now.map { "a \($0.protection.rawValue) key" } ?? "no key")
        try await account.expectServerDevice("secureEnclave")
        // The old key no longer signs the device in.
        let stale = try SoftwareDeviceKey(rawRepresentation: oldKey.privateKey)
        let challenge = try await context.client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: account.username, deviceId: account.deviceID))
        try await expectRefusal(account, "sign in with the old key") {
            _ = try await context.client.send(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: account.username, deviceId: account.deviceID, challengeId: challenge.challengeId,
                    signature: try stale.sign(challenge: challenge.challenge)))
        }
        _ = try await account.signInWithKey(expecting: .passcode)
    }
}
