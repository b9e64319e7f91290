import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice

/// Runs the seeds' scenarios against a server: seed 004's ten (device keys, SMS fallback,
/// method changes), seed 001's device PIN and biometrics (11) and seed 000's fallback chain
/// (12). Each registers accounts of its own, sets the virtual phone to the state its seed text
/// describes, drives the SDK's flows, and checks what the server answered as well as what the
/// SDK returned. The command-line tool, the tests and the dashboard run this same code.
public struct ScenarioRunner: Sendable {
    /// The client for the server the scenarios run against.
    public let client: APIClient
    /// Where the scenarios read the codes the server sends.
    public let inbox: any CodeInbox
    /// The origin the virtual passkey authenticator answers for (the server must list it in
    /// `TWOFOLD_WEBAUTHN_ORIGINS`).
    public let origin: String
    private let clock: @Sendable () -> Date
    private let onPhone: @Sendable (_ scenario: Int, VirtualPhone) -> Void

    /// A runner against `client`'s server, reading codes from `inbox`; `origin` is the server's own unless
    /// given, and `clock` stamps the steps. `onPhone` hears of each virtual phone a scenario sets up,
    /// in the state its seed describes (a dashboard shows it).
    public init(
        client: APIClient, inbox: any CodeInbox, origin: String? = nil,
        clock: @escaping @Sendable () -> Date = { Date() },
        onPhone: @escaping @Sendable (_ scenario: Int, VirtualPhone) -> Void = { _, _ in }
    ) {
        self.client = client
        self.inbox = inbox
        self.origin = origin ?? client.origin
        self.clock = clock
        self.onPhone = onPhone
    }

    /// The scenarios by number, with their names.
    public static var catalogue: [(number: Int, name: String)] { Scenarios.all.map { ($0.number, $0.name) } }

    /// Runs every scenario, or only number `only`, one after another; `onStep` hears each step
    /// as it is logged. A scenario that fails does not stop the next.
    public func run(
        only: Int? = nil, onStep: @escaping @Sendable (_ scenario: Int, ScenarioStep) -> Void = { _, _ in }
    ) async -> [ScenarioResult] {
        var results: [ScenarioResult] = []
        for scenario in Scenarios.all where only == nil || only == scenario.number {
            let log = ScenarioLog(clock: clock) { onStep(scenario.number, $0) }
            let context = ScenarioContext(
                number: scenario.number, client: client, inbox: inbox, origin: origin, log: log, onPhone: onPhone)
            var passed = true
            do {
                try await scenario.run(context)
            } catch let failure as ScenarioFailure {
                _ = failure  // already logged as the failing step
                passed = false
            } catch {
                log.record("the scenario stopped", "FAILED: \(Self.words(error))")
                passed = false
            }
            results.append(
                ScenarioResult(number: scenario.number, name: scenario.name, passed: passed, steps: log.recorded))
        }
        return results
    }

    static func words(_ error: any Error) -> String {
        if let error = error as? APIError { return error.description }
        return "\(error)"
    }
}

/// One scenario: its number, its seed's name for it, and what it does.
struct Scenario: Sendable {
    let number: Int
    let name: String
    let run: @Sendable (ScenarioContext) async throws -> Void
}

/// What a scenario works with: the server, where codes arrive, its log.
struct ScenarioContext: Sendable {
    let number: Int
    let client: APIClient
    let inbox: any CodeInbox
    let origin: String
    let log: ScenarioLog
    var onPhone: @Sendable (Int, VirtualPhone) -> Void = { _, _ in }

    /// A new account on the server (registered, signed in with its password), with a virtual
    /// phone in `state`. A registration refused for its rate waits as the server asks, up to
    /// three times.
    func newAccount(phone state: DeviceCapabilities) async throws -> ScenarioAccount {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let username = "s\(number)-\(suffix)"
        let password = try await Self.register(username, client: client, log: log)
        let phoneNumber = "+1415555" + String(format: "%04d", Int.random(in: 0...9999))
        let phone = VirtualPhone(state)
        onPhone(number, phone)
        let account = ScenarioAccount(
            context: self, username: username, password: password, phoneNumber: phoneNumber,
            phone: phone, deviceID: "phone-\(suffix)")
        let state = await account.signInWithPassword(account.session)
        guard case .signedIn = state else {
            throw ScenarioFailure(action: "sign in \(username) with the password", outcome: Scenarios.words(state))
        }
        log.record("register \(username) and sign in with the password", "signed in")
        return account
    }
}

extension ScenarioContext {
    /// Registers `username` (at `username@example.com`) with a new random password, which it
    /// gives back. A registration refused for its rate waits as the server asks, up to three times.
    static func register(_ username: String, client: APIClient, log: ScenarioLog) async throws -> String {
        let password = "Scenario-\(UUID().uuidString)"
        let register = RegisterRequest(username: username, email: "\(username)@example.com", password: password)
        var attempt = 0
        while true {
            do {
                _ = try await client.send(API.Auth.register, register)
                return password
            } catch let error as APIError where error.status == 429 && attempt < 3 {
                attempt += 1
                let seconds = max(1, min(error.retryAfter ?? 60, 120))
                log.record("register \(username)", "the server limits registrations: waiting \(seconds) s")
                try await Task.sleep(for: .seconds(seconds))
            }
        }
    }
}

/// A scenario's account: who it is, its session, its virtual phone and the SDK's device flows
/// on that phone.
struct ScenarioAccount: Sendable {
    let context: ScenarioContext
    let username: String
    let password: String
    /// The number its SMS codes go to, once verified (`verifyPhone`).
    let phoneNumber: String
    let phone: VirtualPhone
    let deviceID: String
    let session: SessionManager
    let proofs: StepUpProofs

    init(
        context: ScenarioContext, username: String, password: String, phoneNumber: String, phone: VirtualPhone,
        deviceID: String
    ) {
        (self.context, self.username, self.password, self.phoneNumber, self.phone, self.deviceID) =
            (context, username, password, phoneNumber, phone, deviceID)
        session = SessionManager(client: context.client, store: MemoryTokenStore())
        proofs = StepUpProofs()
    }

    var log: ScenarioLog { context.log }
    var client: APIClient { context.client }
    var tag: String { DeviceKeyFlows.tag(origin: client.origin, username: username, deviceID: deviceID) }

    /// The SDK's device flows on the account's session.
    var flows: DeviceKeyFlows { flows(on: session) }

    /// The device flows on `session`, stepping up with this account's proofs when asked.
    func flows(on session: SessionManager) -> DeviceKeyFlows {
        DeviceKeyFlows(session: session, device: phone, deviceID: deviceID, stepUp: stepUp(for: session))
    }

    /// Device flows on a new session that is not signed in (the app after sign-out).
    func signedOut() -> DeviceKeyFlows {
        flows(on: SessionManager(client: client, store: MemoryTokenStore()))
    }

    func stepUp(for session: SessionManager) -> ScenarioStepUp {
        ScenarioStepUp(account: self, session: session)
    }

    /// The password sign-in on `session` (no second factor expected).
    func signInWithPassword(_ session: SessionManager) async -> SignInState {
        await SignInFlow(client: client, session: session).signIn(username, password: password)
    }

    // MARK: What the server says

    /// The account's devices as the server lists them.
    func serverDevices() async throws -> [DeviceDTO] {
        try await session.authorized(stepUp: nil) { [client, username] in
            try await client.send(API.DeviceKeys.devices, username, bearer: $0).devices
        }
    }

    /// How the server would sign this device in now (`secureEnclave` or `smsOTP`): the method of
    /// a fresh challenge.
    func serverMethod() async throws -> String {
        try await client.send(API.DeviceKeys.initiate, DeviceRequest(username: username, deviceId: deviceID)).method
    }

    /// Checks the server lists this device, signing in by `method`, or no device at all.
    func expectServerDevice(_ method: String?) async throws {
        let devices = try await serverDevices()
        let listed = devices.map { "\($0.deviceId) (\($0.method))" }.joined(separator: ", ")
        if let method {
            try log.check(
                "the server's devices for \(username)",
                devices.map(\.deviceId) == [deviceID] && devices[0].method == method,
                listed.isEmpty ? "none" : listed)
        } else {
            try log.check("the server's devices for \(username)", devices.isEmpty, listed.isEmpty ? "none" : listed)
        }
    }

    // MARK: Setting up

    /// Turns on SMS codes to `phoneNumber`, the code read from the inbox: the account then has a
    /// verified number on file.
    func verifyPhone() async throws {
        try await ScenarioStepUp(account: self, session: session).person.verifyPhone(
            username: username, session: session)
    }

    /// Signs a signed-out app in with this device's key; the session.
    func signInWithKey(expecting protection: KeyProtection) async throws -> SessionManager {
        let fresh = SessionManager(client: client, store: MemoryTokenStore())
        let outcome = try await flows(on: fresh).signIn(username: username)
        guard case .signedIn(let user) = outcome else {
            throw ScenarioFailure(action: "sign in with the device key", outcome: Scenarios.words(outcome))
        }
        let prompt = await phone.prompts.last
        try log.check(
            "sign in with the device key", user.username == username && prompt == protection,
            "signed in as \(user.username) after a \(prompt?.rawValue ?? "missing") prompt")
        let me = try await client.send(API.Account.show, bearer: try await fresh.accessToken())
        try log.check("the server's account for the new session", me.username == username, me.username)
        return fresh
    }
}

/// What the scenarios have to prove themselves with beside the password: backup codes shown
/// at a setup, in the order they may be used.
final class StepUpProofs: @unchecked Sendable {
    // Safe: read and written under `lock` only.
    private let lock = NSLock()
    private var backupCodes: [String] = []
    private var passwordJustGiven = false

    func keep(backupCodes codes: [String]) { lock.withLock { backupCodes = codes } }
    func takeBackupCode() -> String? { lock.withLock { backupCodes.isEmpty ? nil : backupCodes.removeFirst() } }
    var backupCodesLeft: [String] { lock.withLock { backupCodes } }

    /// Whether the last proof given for "another factor, or the password with a fresh code"
    /// was the password (the fresh code comes next); flips it.
    func passwordThenCode() -> Bool {
        lock.withLock {
            passwordJustGiven.toggle()
            return passwordJustGiven
        }
    }
}

/// Step-ups as a person in the scenario would give them: the password when the server asks for
/// it; a second factor the account had (the device key, a backup code, an SMS code); for a
/// removal, another factor or the password and then a fresh SMS code.
struct ScenarioStepUp: StepUpProviding {
    /// Who answers: the account's password, number, backup codes and phone.
    struct Person: Sendable {
        let client: APIClient
        let device: any DeviceSecurity
        let deviceID: String
        let tag: String
        let password: String
        let phoneNumber: String
        let proofs: StepUpProofs
        let inbox: any CodeInbox
        let log: ScenarioLog
    }

    let person: Person
    let session: SessionManager

    init(account: ScenarioAccount, session: SessionManager) {
        person = Person(
            client: account.client, device: account.phone, deviceID: account.deviceID, tag: account.tag,
            password: account.password, phoneNumber: account.phoneNumber, proofs: account.proofs,
            inbox: account.context.inbox, log: account.log)
        self.session = session
    }

    init(person: Person, session: SessionManager) { (self.person, self.session) = (person, session) }

    func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
        let proof = try await proof(need: need, methods: methods)
        person.log.record("step up (\(need ?? "asked"))", "with \(proof.method.rawValue)")
        return proof
    }

    private func proof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
        switch need {
        case "recentSecondFactor":
            if methods.contains(.deviceKey), await person.device.hasKey(tag: person.tag),
                let keyProof = try? await deviceKey()
            {
                return keyProof
            }
            if methods.contains(.backup), let code = person.proofs.takeBackupCode() {
                return StepUpRequest(method: .backup, code: code)
            }
            return try await smsCode()
        case "otherProof":
            return person.proofs.passwordThenCode()
                ? StepUpRequest(method: .password, password: person.password) : try await smsCode()
        default:
            return StepUpRequest(method: .password, password: person.password)
        }
    }

    private func deviceKey() async throws -> StepUpRequest {
        let token = try await session.accessToken()
        let challenge = try await person.client.send(
            API.Auth.stepUpDeviceKeyChallenge, StepUpDeviceKeyChallengeRequest(deviceId: person.deviceID),
            bearer: token)
        guard let bytes = Data(base64Encoded: challenge.challenge) else {
            throw ScenarioFailure(action: "step up with the device key", outcome: "the challenge is not base64")
        }
        let signature = try await person.device.sign(bytes, tag: person.tag)
        return StepUpRequest(
            method: .deviceKey, deviceId: person.deviceID, challengeId: challenge.challengeId,
            signature: signature.base64EncodedString())
    }

    private func smsCode() async throws -> StepUpRequest {
        let token = try await session.accessToken()
        let code = try await person.inbox.code(to: person.phoneNumber) { [client = person.client] in
            _ = try await client.send(API.Auth.stepUpSend, StepUpSendRequest(method: .sms), bearer: token)
        }
        return StepUpRequest(method: .sms, code: code)
    }
}

extension ScenarioStepUp.Person {
    /// Turns on SMS codes to `phoneNumber`, the code read from the inbox: the account then has a
    /// verified number on file.
    func verifyPhone(username: String, session: SessionManager) async throws {
        let security = AccountSecurity(
            session: session, stepUp: ScenarioStepUp(person: self, session: session))
        let code = try await inbox.code(to: phoneNumber) {
            _ = try await security.startSMS(phone: phoneNumber)
        }
        _ = try await security.confirmSMS(code: code)
        let methods = try await session.authorized(stepUp: nil) { [client] in
            try await client.send(API.TwoFactor.mfaStatus, bearer: $0).methods
        }
        try log.check(
            "verify \(PhoneMask.masked(phoneNumber)) with the code sent to it", methods.contains(.sms),
            "the server's methods: \(methods.map(\.rawValue).joined(separator: ", "))")

        // A factor confirms nothing in the session that added it: sign in again with it, as
        // the person would before changing anything else.
        let flow = SignInFlow(client: client, session: session)
        let again = try await inbox.code(to: phoneNumber) { [username, password] in
            var state = await flow.signIn(username, password: password)
            // Another method first (a device key enrolled before): SMS picked instead.
            if case .secondFactor(let step) = state, step.method != .sms, step.methods.contains(.sms) {
                state = await flow.choose(.sms)
            }
            // A code that was not sent (refused for its rate) would be waited for in vain.
            guard case .secondFactor(let step) = state, step.method == .sms, step.problem == nil else {
                throw ScenarioFailure(action: "sign in again with the password", outcome: Scenarios.words(state))
            }
        }
        let state = await flow.submit(code: again)
        try log.check(
            "sign in again with the password and an SMS code", state.isSignedIn,
            Scenarios.words(state))
    }
}
