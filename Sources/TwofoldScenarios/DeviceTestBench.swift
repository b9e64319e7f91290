import Foundation
import TwofoldAPI
import TwofoldClient

/// The testing dashboard's actions (seed 004): on one phone (the Secure Enclave, or the virtual
/// phone) and one test account of its own, each action drives the SDK's device flows and writes
/// what happened to the results log, with the phone's LocalAuthentication reason when it gave
/// one. An action that fails is logged as failed; none throws.
public actor DeviceTestBench {
    /// What the dashboard's status section shows.
    public struct Status: Codable, Sendable, Equatable {
        /// The phone's security.
        public var capabilities: DeviceCapabilities
        /// Seed 004's flow for it.
        public var capability: DeviceCapability
        /// The test account, once made.
        public var username: String?
        /// Whether the phone keeps a key for the account.
        public var hasKey: Bool
        /// How the server signs this device in (`secureEnclave`, `smsOTP`), when enrolled.
        public var method: String?
        /// Whether the account has a verified number for SMS codes.
        public var phoneVerified: Bool
    }

    /// The client for the server.
    public nonisolated let client: APIClient
    /// The phone.
    public nonisolated let device: any DeviceSecurity
    /// The identifier the server knows the phone by.
    public nonisolated let deviceID: String
    private let inbox: any CodeInbox
    private let log: ScenarioLog
    /// The test account: who it is, how it answers step-ups, the session the app is in.
    private struct Account {
        let username: String
        let person: ScenarioStepUp.Person
        var session: SessionManager
    }

    private var account: Account?
    private var phoneVerified = false

    /// A bench against `client`'s server on `device` (known as `deviceID`), reading codes from
    /// `inbox`; `onStep` hears each logged step, stamped by `clock`.
    public init(
        client: APIClient, device: any DeviceSecurity, deviceID: String, inbox: any CodeInbox,
        clock: @escaping @Sendable () -> Date = { Date() }, onStep: @escaping @Sendable (ScenarioStep) -> Void
    ) {
        (self.client, self.device, self.deviceID, self.inbox) = (client, device, deviceID, inbox)
        log = ScenarioLog(clock: clock, onStep: onStep)
    }

    /// The status section: the phone's security, the account, and the server's word on the device.
    public func status() async -> Status {
        let capabilities = await device.capabilities()
        var status = Status(
            capabilities: capabilities, capability: capabilities.capability, username: account?.username,
            hasKey: false, method: nil, phoneVerified: phoneVerified)
        if let account {
            status.hasKey = await device.hasKey(tag: account.person.tag)
            let token = try? await account.session.accessToken()
            if let token,
                let devices = try? await client.send(API.DeviceKeys.devices, account.username, bearer: token).devices
            {
                status.method = devices.first { $0.deviceId == deviceID }?.method
            }
        }
        return status
    }

    // MARK: The actions

    /// "Check Device Security Status": what the phone offers, logged.
    public func checkDeviceSecurity() async {
        let capabilities = await device.capabilities()
        log.record(
            "check device security",
            "\(capabilities.capability.rawValue): secure hardware \(capabilities.secureHardware ? "yes" : "no (keys in the Keychain)"), "
                + "biometry \(capabilities.biometry.rawValue) \(capabilities.biometryEnrolled ? "enrolled" : "not enrolled"), "
                + "passcode \(capabilities.passcodeSet ? "set" : "not set")",
            reason: capabilities.capability == .none ? DeviceAuthFailure.passcodeNotSet.logText : nil)
    }

    /// "Enroll with Biometrics" / "Enroll with Passcode Only".
    public func enroll(_ protection: KeyProtection) async {
        await act("enroll with \(protection == .biometric ? "biometrics" : "the passcode only")") { account, flows in
            let outcome = try await flows.enroll(username: account.username, protection: protection)
            self.record(outcome, "enroll with \(protection == .biometric ? "biometrics" : "the passcode only")")
            try await self.signInAgain(after: outcome, account.username)
        }
    }

    /// "Re-enroll": a new key in place of the old, guarded as the phone now allows.
    public func reEnroll() async {
        await act("re-enroll") { account, flows in
            let capability = await self.device.capabilities().capability
            let outcome = try await flows.upgrade(
                username: account.username, protection: capability == .biometricsAvailable ? .biometric : .passcode)
            self.record(outcome, "re-enroll")
            try await self.signInAgain(after: outcome, account.username)
        }
    }

    /// "Unenroll": the server lets the device go, and the key is deleted.
    public func unenroll() async {
        await act("unenroll") { account, flows in
            try await flows.unenroll(username: account.username)
            let kept = await self.device.hasKey(tag: account.person.tag)
            try self.log.check(
                "unenroll", !kept, kept ? "the key is still on the phone" : "the server let go; key deleted")
        }
    }

    /// "Test Authentication": a signed-out sign-in with the device's key (or its SMS code).
    public func testAuthentication() async {
        await act("test authentication") { account, _ in
            let fresh = SessionManager(client: self.client, store: MemoryTokenStore())
            let flows = DeviceKeyFlows(session: fresh, device: self.device, deviceID: self.deviceID)
            switch try await flows.signIn(username: account.username) {
            case .signedIn(let user):
                // The app carries on in the session the key began, as after any sign-in: a key
                // added in the first session cannot vouch for changes made in that session.
                self.adopt(fresh)
                self.log.record("test authentication", "signed in as \(user.username)")
            case .useSMS(let failure):
                self.log.record(
                    "test authentication", "the key could not sign: offer SMS", reason: failure.logText)
            case .smsCode:
                let code = try await self.inbox.code(to: account.person.phoneNumber) {
                    _ = try await flows.requestSMSCode(username: account.username)
                }
                let outcome = try await flows.signIn(username: account.username, smsCode: code)
                if case .signedIn = outcome { self.adopt(fresh) }
                try self.log.check(
                    "test authentication with an SMS code", { if case .signedIn = outcome { true } else { false } }(),
                    Scenarios.words(outcome))
            case .refused(let code, let words):
                try self.log.check("test authentication", false, "refused: \(code?.rawValue ?? "-"): \(words)")
            }
        }
    }

    /// "Simulate Biometric Decline": the next prompt is declined, then the sign-in (or, with no
    /// key yet, the biometric enrolment) meets it.
    public func simulateBiometricDecline() async {
        guard let simulating = device as? any PromptSimulating else {
            log.record("simulate biometric decline", "this phone cannot simulate a decline")
            return
        }
        await simulating.cancelNextPrompt()
        log.record("simulate biometric decline", "the next prompt will be declined")
        var enrolled = false
        if let account { enrolled = await device.hasKey(tag: account.person.tag) }
        if enrolled { await testAuthentication() } else { await enroll(.biometric) }
    }

    /// "Switch to SMS Fallback": a verified number (its code read from the inbox), then SMS codes
    /// sign this device in instead of its key.
    public func switchToSMSFallback() async {
        await act("switch to SMS fallback") { account, flows in
            if !self.phoneVerified {
                try await account.person.verifyPhone(username: account.username, session: account.session)
                self.phoneVerified = true
            }
            if await self.status().method == "secureEnclave" {
                try await flows.downgrade(username: account.username)
                self.log.record("switch to SMS fallback", "the key deleted; SMS codes from now on")
            } else {
                let outcome = try await flows.enrollForSMS(username: account.username)
                self.log.record("switch to SMS fallback", Scenarios.words(outcome))
            }
        }
    }

    // MARK: Running

    private func adopt(_ session: SessionManager) {
        account?.session = session
    }

    /// After a new key, the app signs in again with it, as the person would: a factor added in a
    /// session never vouches for changes made in that same session (the server's rule), so the
    /// next action needs a session the key began.
    private func signInAgain(after outcome: DeviceEnrolment, _ username: String) async throws {
        guard case .enrolled = outcome else { return }
        let fresh = SessionManager(client: client, store: MemoryTokenStore())
        let signIn = try await DeviceKeyFlows(session: fresh, device: device, deviceID: deviceID)
            .signIn(username: username)
        if case .signedIn = signIn { adopt(fresh) }
        log.record("sign in again with the new key", Scenarios.words(signIn))
    }

    /// The test account (made on first use) and the device flows on its session.
    private func prepared() async throws -> (Account, DeviceKeyFlows) {
        if account == nil {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
            let username = "dash-\(suffix)"
            let password = try await ScenarioContext.register(username, client: client, log: log)
            let session = SessionManager(client: client, store: MemoryTokenStore())
            let state = await SignInFlow(client: client, session: session).signIn(username, password: password)
            guard case .signedIn = state else {
                throw ScenarioFailure(action: "sign in \(username)", outcome: Scenarios.words(state))
            }
            let flows = DeviceKeyFlows(session: session, device: device, deviceID: deviceID)
            let person = ScenarioStepUp.Person(
                client: client, device: device, deviceID: deviceID, tag: flows.tag(for: username),
                password: password, phoneNumber: "+1415555" + String(format: "%04d", Int.random(in: 0...9999)),
                proofs: StepUpProofs(), inbox: inbox, log: log)
            account = Account(username: username, person: person, session: session)
            log.record("make the test account", "registered \(username) and signed in with the password")
        }
        let account = account!
        let flows = DeviceKeyFlows(
            session: account.session, device: device, deviceID: deviceID,
            stepUp: ScenarioStepUp(person: account.person, session: account.session))
        return (account, flows)
    }

    private func act(
        _ action: String,
        _ body: (Account, DeviceKeyFlows) async throws -> Void
    ) async {
        do {
            let (account, flows) = try await prepared()
            try await body(account, flows)
        } catch is ScenarioFailure {
            // Logged as the failing step.
        } catch let failure as DeviceAuthFailure {
            log.record(action, "FAILED: \(failure.message)", reason: failure.logText)
        } catch {
            log.record(action, "FAILED: \(ScenarioRunner.words(error))")
        }
    }

    private func record(_ outcome: DeviceEnrolment, _ action: String) {
        log.record(action, Scenarios.words(outcome), reason: Scenarios.reason(outcome))
    }
}
