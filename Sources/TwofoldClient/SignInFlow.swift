import Foundation
import TwofoldAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Makes passkey assertions for a sign-in: `ASAuthorizationController` on Apple platforms, the
/// virtual phone in tests and the command-line tool.
public protocol PasskeyAsserting: Sendable {
    /// An assertion for `options`; throws `PasskeyCancelled` when the person declines.
    func assertion(for options: PasskeyRequestOptions) async throws -> AuthenticationCredential
}

/// Signs a sign-in's challenge with this device's key (seed 004's key as a second factor after
/// the password): the Secure Enclave behind its prompt, or the virtual phone.
public protocol DeviceKeySigning: Sendable {
    /// The device the key was enrolled for.
    var deviceID: String { get }
    /// `challenge` signed (ECDSA-SHA256, DER), after the key's prompt.
    func sign(challenge: Data) async throws(DeviceAuthFailure) -> Data
}

/// This device's keys, one per account enrolled on it: the signer for the account name typed,
/// when the device keeps a key for it (an app where several accounts may have keys).
public protocol DeviceKeySigners: Sendable {
    /// The key for the account typed as `name`, or `nil` when this device keeps none for it.
    func signer(forAccount name: String) async -> (any DeviceKeySigning)?
}

/// The person dismissed the passkey prompt (or biometrics were cancelled).
public struct PasskeyCancelled: Error, Sendable, Equatable {
    /// A cancellation, as a `PasskeyCreating` or `PasskeyAsserting` throws it when the person declines.
    public init() {}
}

/// What went wrong in a sign-in, as a screen shows it: never a thrown string.
public enum SignInProblem: Sendable, Equatable, Codable {
    /// The account name or password is wrong.
    case invalidCredentials
    /// The code is wrong; how many tries are left before the method locks, when the server says.
    case wrongCode(attemptsRemaining: Int?)
    /// The method (or the account) is locked until then.
    case locked(until: Date?)
    /// Too many requests: try again after so many seconds.
    case rateLimited(retryAfter: Int?)
    /// The sign-in outlived its flow, or was completed elsewhere: start again with the password.
    case flowExpired
    /// The code (or passkey or key challenge) was used a moment ago: each works once; use
    /// another, or ask for a new one.
    case alreadyUsed
    /// The code or challenge expired: ask for a new one.
    case expired
    /// The server could not be reached.
    case offline
    /// The person cancelled the passkey or biometric prompt.
    case cancelled
    /// The device's key could not sign (locked out, invalidated, no security left): another
    /// method is needed.
    case deviceKey(DeviceAuthFailure)
    /// Another refusal, with the server's code and words.
    case refused(ErrorCode, String)
}

extension SignInProblem {
    /// The problem in the words a screen (or a terminal) shows the person.
    public var message: String {
        switch self {
        case .invalidCredentials: Words.text("signIn.invalidCredentials", "The account name or password is wrong.")
        case .wrongCode(let left?):
            left == 1
                ? Words.text("signIn.wrongCodeOneLeft", "That code is wrong; 1 try left.")
                : Words.text("signIn.wrongCodeLeft", "That code is wrong; {count} tries left.", ["count": "\(left)"])
        case .wrongCode(nil): Words.text("signIn.wrongCode", "That code is wrong.")
        case .locked(let until?):
            Words.text(
                "signIn.lockedUntil", "Locked until {time}.",
                ["time": until.formatted(date: .omitted, time: .standard)])
        case .locked(nil): Words.text("signIn.locked", "Locked for now.")
        case .rateLimited(let seconds?):
            Words.text(
                "signIn.rateLimitedFor", "Too many tries: wait {count} seconds and try again.",
                ["count": "\(seconds)"])
        case .rateLimited(nil): Words.text("signIn.rateLimited", "Too many tries: wait a little and try again.")
        case .flowExpired: Words.text("signIn.flowExpired", "This sign-in is over; sign in again with your password.")
        case .alreadyUsed:
            Words.text("signIn.alreadyUsed", "That code was just used; each works once. Use another one.")
        case .expired: Words.text("signIn.expired", "That code expired; ask for a new one.")
        case .offline:
            Words.text("signIn.offline", "The server cannot be reached. Check your connection and try again.")
        case .cancelled: Words.text("signIn.cancelled", "Cancelled.")
        case .deviceKey(let reason): "\(reason.message)."
        case .refused(_, let words): words
        }
    }

    /// What `error`, thrown by a call outside a sign-in (a setup, a change, a device flow),
    /// means to the person: as in a sign-in, except that a refused token is a signed-out session.
    public static func of(_ error: any Error) -> SignInProblem {
        switch error {
        case let error as SessionError:
            switch error {
            case .signedOut: return .refused(.unauthorized, "You were signed out. Sign in again.")
            case .offline: return .offline
            case .rateLimited(let seconds): return .rateLimited(retryAfter: seconds)
            }
        case let failure as DeviceAuthFailure:
            return failure == .userCancel ? .cancelled : .deviceKey(failure)
        case let error as APIError where error.code == .unauthorized:
            return .refused(.unauthorized, "You were signed out. Sign in again.")
        case let error as APIError where error.code == .expired || error.code == .alreadyUsed:
            return error.code == .expired ? .expired : .alreadyUsed
        case let error as UnreadableAnswer:
            return .refused(.internalError, error.description)
        case let error as MissingResource:
            return .refused(.validationFailed, error.description)
        case let refusal as PhoneStepUpRefused:
            return .refused(.forbidden, refusal.message)
        default:
            return SignInFlow.problem(error)
        }
    }
}

/// One step of a sign-in: the state a screen renders.
public enum SignInState: Sendable, Equatable {
    /// Asking for the account name and password (after a problem, it says which).
    case credentials(SignInProblem?)
    /// A request is on its way.
    case working
    /// The password was right; a second factor is needed.
    case secondFactor(SecondFactorStep)
    /// Signed in as this user; the `SessionManager` keeps the session.
    case signedIn(UserDTO)
    /// Every method offered has been tried or set aside: account recovery is what is left
    /// (seed 000's fallback chain ends there).
    case recovery
}

/// The second step as a screen shows it.
public struct SecondFactorStep: Sendable, Equatable, Codable {
    /// The methods the server offered that this client can use, in the fallback chain's order.
    public var methods: [FactorMethod]
    /// The method asked for now.
    public var method: FactorMethod
    /// The account's phone number, masked, when the server sent it.
    public var maskedPhone: String?
    /// The account's email address, masked, when the server sent it.
    public var maskedEmail: String?
    /// When the flow ends (the password must be typed again after).
    public var expiresAt: Date
    /// Tries left for the method, once the server has said.
    public var attemptsRemaining: Int?
    /// Until when the method is locked, once the server has said.
    public var lockedUntil: Date?
    /// When another code may be sent (SMS and email).
    public var resendAvailableAt: Date?
    /// Where the last code went (masked), once one was sent in this flow.
    public var codeSentTo: String?
    /// What went wrong with the last try.
    public var problem: SignInProblem?
    /// How far this device's clock is off the server's, when more than 30 seconds: an
    /// authenticator app here may make codes the server refuses (seed 000's warning).
    public var clockSkew: TimeInterval?
    /// The request waiting on the phone ("Approve on your phone"), once asked: its number is
    /// what this screen shows.
    public var approval: PushStartResponse?

    /// A second step, as a screen's preview or test builds one; the flow makes its own.
    public init(
        methods: [FactorMethod], method: FactorMethod, maskedPhone: String? = nil, maskedEmail: String? = nil,
        expiresAt: Date, attemptsRemaining: Int? = nil, lockedUntil: Date? = nil, resendAvailableAt: Date? = nil,
        codeSentTo: String? = nil, problem: SignInProblem? = nil, clockSkew: TimeInterval? = nil
    ) {
        (self.methods, self.method, self.maskedPhone, self.maskedEmail, self.expiresAt) =
            (methods, method, maskedPhone, maskedEmail, expiresAt)
        (self.attemptsRemaining, self.lockedUntil, self.resendAvailableAt, self.codeSentTo) =
            (attemptsRemaining, lockedUntil, resendAvailableAt, codeSentTo)
        (self.problem, self.clockSkew) = (problem, clockSkew)
    }
}

/// A second step waiting for its code, as a process keeps it between two runs (the command-line
/// tool's `login`, then `login --code`). It names a live login flow: keep it as a secret.
public struct PendingSignIn: Sendable, Equatable, Codable, RedactedDescription {
    /// The login flow's identifier (`otpFlowId`).
    public var flow: String
    /// The second step as it was when kept.
    public var step: SecondFactorStep
    /// The server the flow belongs to (`APIClient.origin`): it is taken up, and its code sent,
    /// nowhere else.
    public var server: String?

    /// The second step `step` of the login flow `flow` at `server`.
    public init(flow: String, step: SecondFactorStep, server: String?) {
        (self.flow, self.step, self.server) = (flow, step, server)
    }
}

/// A sign-in as a state machine (seeds 003, 002, 000): credentials, then the second factor the
/// account has (authenticator code, SMS or email code with resend, backup code, passkey), then
/// signed in, with the session handed to `SessionManager`. Every failure is a state; falling
/// back walks seed 000's chain (passkey → authenticator code → … → backup code) and ends in
/// recovery.
public actor SignInFlow {
    /// The methods this client can complete, in the fallback chain's order.
    public static let chain: [FactorMethod] = [.webauthn, .deviceKey, .push, .totp, .sms, .email, .backup]

    /// The client the sign-in's requests go through.
    public nonisolated let client: APIClient
    private let session: SessionManager
    private let passkeys: (any PasskeyAsserting)?
    private let deviceKey: (any DeviceKeySigning)?
    private let deviceKeys: (any DeviceKeySigners)?
    /// The key of the account being signed in to (`deviceKey`, or `deviceKeys`' for its name).
    private var accountKey: (any DeviceKeySigning)?
    private let rememberedDevices: (any RememberedDeviceStore)?
    private let now: @Sendable () -> Date
    private var flow: String?
    private var tried: Set<FactorMethod> = []
    private let watchers = StateWatchers<SignInState>(buffer: 16, initial: .credentials(nil))

    /// The sign-in's state now.
    public private(set) var state: SignInState = .credentials(nil)
    /// The name of the passkey that finished the sign-in, when one did (seed 000's "Signed in
    /// with <name>"); `nil` for any other sign-in.
    public private(set) var passkeyName: String?

    /// `passkeys` makes passkey assertions and `deviceKey` signs with this device's key (or
    /// `deviceKeys` finds the key for the account name typed); without them, passkeys and the
    /// device key are not offered. `rememberedDevices` keeps the token of
    /// "remember this device" and sends it with the next password sign-in of the account, which
    /// then skips the second step; without it, remembering is not offered. It also keeps every
    /// sign-in's device token, sent the same way, which skips nothing but keeps the account's
    /// password sign-ins here open while strangers guess its password elsewhere.
    public init(
        client: APIClient, session: SessionManager, passkeys: (any PasskeyAsserting)? = nil,
        deviceKey: (any DeviceKeySigning)? = nil, deviceKeys: (any DeviceKeySigners)? = nil,
        rememberedDevices: (any RememberedDeviceStore)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        (self.client, self.session, self.passkeys, self.deviceKey, self.rememberedDevices, self.now) =
            (client, session, passkeys, deviceKey, rememberedDevices, now)
        (self.deviceKeys, accountKey) = (deviceKeys, deviceKey)
    }

    /// Whether "remember this device" can be offered: a store keeps its token.
    public nonisolated var canRememberDevice: Bool { rememberedDevices != nil }

    /// The state now, read without `await` (a SwiftUI view's body): `state` as of its last change.
    public nonisolated var currentState: SignInState { watchers.latest }

    /// The state now, then each change.
    public func states() -> AsyncStream<SignInState> { watchers.stream(starting: state) }

    @discardableResult
    private func enter(_ new: SignInState) -> SignInState {
        state = new
        watchers.yield(new)
        return new
    }

    /// The second step waiting now, to take up again later with `resume(_:)`.
    public var pending: PendingSignIn? {
        guard case .secondFactor(let step) = state, let flow else { return nil }
        return PendingSignIn(flow: flow, step: step, server: client.origin)
    }

    /// Takes up a second step kept by `pending`, when it belongs to this flow's server;
    /// otherwise the credentials are asked for (its flow and a code are never sent elsewhere).
    @discardableResult
    public func resume(_ pending: PendingSignIn) -> SignInState {
        guard pending.server == client.origin else { return enter(.credentials(nil)) }
        flow = pending.flow
        tried = []
        return enter(.secondFactor(pending.step))
    }

    // MARK: Intents

    /// Starts over at the credentials.
    @discardableResult
    public func restart() -> SignInState {
        flow = nil
        tried = []
        return enter(.credentials(nil))
    }

    /// The account name (email address or username) and password.
    @discardableResult
    public func signIn(_ name: String, password: String) async -> SignInState {
        enter(.working)
        if deviceKey == nil { accountKey = await deviceKeys?.signer(forAccount: name) }
        let attempt =
            name.contains("@")
            ? LoginRequest(email: name, password: password) : LoginRequest(username: name, password: password)
        var headers: [String: String] = [:]
        if let remembered = await rememberedDevices?.token(for: name, at: client.origin) {
            headers[Wire.Header.trustedDevice] = remembered
        }
        if let device = await rememberedDevices?.token(for: name, at: Self.deviceTokens(client.origin)) {
            headers[Wire.Header.deviceToken] = device
        }
        do {
            switch try await client.send(API.Auth.login, attempt, headers: headers) {
            case .signedIn(let tokens):
                await keepDeviceToken(tokens)
                await session.signedIn(tokens)
                return finish(tokens.user)
            case .secondStep(let challenge):
                let state = secondStep(challenge)
                // The server sent a code only for the account's primary method. When this client
                // cannot use that one (a device key or passkey it has no maker for) and the first
                // it can use is a sent code, that code is asked for now.
                if case .secondFactor(let step) = state, step.method.isSentCode,
                    step.method != challenge.availableMethods.first
                {
                    return await send(step)
                }
                return state
            }
        } catch {
            return enter(.credentials(Self.problem(error)))
        }
    }

    /// Passwordless: a passkey alone signs in (the "Sign in with a passkey" button, or the
    /// passkey the person picks from the keyboard's autofill bar when `asserter` makes
    /// autofill-assisted requests). Without a passkey maker nothing happens; a cancel goes back
    /// to the credentials, saying so.
    @discardableResult
    public func signInWithPasskey(using asserter: (any PasskeyAsserting)? = nil) async -> SignInState {
        guard let passkeys = asserter ?? passkeys else { return state }
        flow = nil
        tried = []
        enter(.working)
        do {
            let options = try await client.send(API.Passkeys.signInOptions)
            return await signIn(with: try await passkeys.assertion(for: options))
        } catch {
            return enter(.credentials(Self.problem(error)))
        }
    }

    /// The keyboard's autofill bar offers passkeys while the person types (iOS's
    /// autofill-assisted request, the web's conditional mediation): this waits in the
    /// credentials, changing nothing, until the person picks one, then signs in with it as the
    /// button does. `nil` when nothing happened: the request ended unpicked (a cancel, the screen
    /// gone, no network), or the person meanwhile went on another way, which it never disturbs.
    public func signInWithAutofilledPasskey(using asserter: any PasskeyAsserting) async -> SignInState? {
        guard case .credentials = state else { return nil }
        let credential: AuthenticationCredential
        do {
            let options = try await client.send(API.Passkeys.signInOptions)
            credential = try await asserter.assertion(for: options)
        } catch {
            return nil
        }
        guard case .credentials = state else { return nil }
        flow = nil
        tried = []
        enter(.working)
        return await signIn(with: credential)
    }

    /// The server's answer to a passkey picked for a passwordless sign-in.
    private func signIn(with credential: AuthenticationCredential) async -> SignInState {
        do {
            let tokens = try await client.send(API.Passkeys.signInVerify, PasskeySignInRequest(credential: credential))
            await keepDeviceToken(tokens)
            await session.signedIn(tokens)
            return finish(tokens.user, passkey: tokens.passkeyName)
        } catch {
            return enter(.credentials(Self.problem(error)))
        }
    }

    /// Asks for `method` instead (one the server offered). For SMS or email, the code is sent.
    @discardableResult
    public func choose(_ method: FactorMethod) async -> SignInState {
        guard case .secondFactor(var step) = state, step.methods.contains(method) else { return state }
        step.method = method
        step.problem = nil
        step.attemptsRemaining = nil
        step.lockedUntil = nil
        if method.isSentCode {
            enter(.secondFactor(step))
            return await send(step)
        }
        return enter(.secondFactor(step))
    }

    /// Another code by the chosen method (SMS or email), once the cooldown allows.
    @discardableResult
    public func resend() async -> SignInState {
        guard case .secondFactor(let step) = state, step.method.isSentCode else { return state }
        return await send(step)
    }

    /// Sets the chosen method aside for the next in the chain, or recovery after the last.
    @discardableResult
    public func fallBack() -> SignInState {
        guard case .secondFactor(var step) = state else { return state }
        tried.insert(step.method)
        guard let next = step.methods.first(where: { !tried.contains($0) }) else { return enter(.recovery) }
        step.method = next
        step.problem = nil
        step.attemptsRemaining = nil
        step.lockedUntil = nil
        return enter(.secondFactor(step))
    }

    /// A code for the chosen method (authenticator, SMS, email or backup code).
    @discardableResult
    public func submit(code: String, rememberDevice: Bool = false) async -> SignInState {
        guard case .secondFactor(let step) = state, let flow, step.method != .webauthn, step.method != .deviceKey,
            step.method != .push
        else { return state }
        enter(.working)
        do {
            let answer = try await client.send(
                API.SecondStep.verifyLogin,
                MFAVerifyLoginRequest(
                    code: code, method: step.method, otpFlowId: flow, trustDevice: rememberDevice && canRememberDevice))
            return await completed(answer)
        } catch {
            return failed(step, error)
        }
    }

    /// The passkey prompt, then its assertion as the second factor.
    @discardableResult
    public func usePasskey(rememberDevice: Bool = false) async -> SignInState {
        guard case .secondFactor(let step) = state, let flow, step.method == .webauthn, let passkeys else {
            return state
        }
        enter(.working)
        do {
            let options = try await client.send(API.Passkeys.flowOptions, PasskeyFlowOptionsRequest(otpFlowId: flow))
            let credential = try await passkeys.assertion(for: options)
            let answer = try await client.send(
                API.Passkeys.flowVerify,
                PasskeyFlowVerifyRequest(
                    otpFlowId: flow, credential: credential, trustDevice: rememberDevice && canRememberDevice))
            return await completed(answer)
        } catch {
            return failed(step, error)
        }
    }

    /// The device key's prompt, then its signature over the server's challenge as the second
    /// factor. A key that cannot sign is a problem on the step: fall back to another method.
    @discardableResult
    public func useDeviceKey(rememberDevice: Bool = false) async -> SignInState {
        guard case .secondFactor(let step) = state, let flow, step.method == .deviceKey, let deviceKey = accountKey
        else {
            return state
        }
        enter(.working)
        do {
            let challenge = try await client.send(
                API.SecondStep.deviceKeyChallenge,
                DeviceKeyChallengeRequest(deviceId: deviceKey.deviceID, otpFlowId: flow))
            guard let bytes = Data(base64Encoded: challenge.challenge) else {
                return failed(
                    step, UnreadableAnswer(endpoint: "device-key challenge", status: 200, reason: "not base64"))
            }
            let signature: Data
            do {
                signature = try await deviceKey.sign(challenge: bytes)
            } catch {
                return failed(step, error == .userCancel ? PasskeyCancelled() : DeviceKeyRefusal(reason: error))
            }
            let answer = try await client.send(
                API.SecondStep.verifyLogin,
                MFAVerifyLoginRequest(
                    method: .deviceKey, otpFlowId: flow, trustDevice: rememberDevice && canRememberDevice,
                    deviceId: deviceKey.deviceID,
                    challengeId: challenge.challengeId, signature: signature.base64EncodedString()))
            return await completed(answer)
        } catch {
            return failed(step, error)
        }
    }

    /// The phone's refusal to sign, carried to `problem(_:)`.
    private struct DeviceKeyRefusal: Error {
        let reason: DeviceAuthFailure
    }

    // MARK: Steps

    private func secondStep(_ challenge: LoginChallengeResponse) -> SignInState {
        // "Approve on your phone" needs nothing of this device: the phone holds the key.
        flow = challenge.otpFlowId
        tried = []
        let usable = Self.chain.filter { method in
            challenge.availableMethods.contains(method) && (method != .webauthn || passkeys != nil)
                && (method != .deviceKey || accountKey != nil)
        }
        // The server lists the account's primary method first; an SMS or email primary has had
        // its code sent already.
        guard let first = challenge.availableMethods.first(where: usable.contains) else { return enter(.recovery) }
        var step = SecondFactorStep(
            methods: usable, method: first, maskedPhone: challenge.maskedPhone, maskedEmail: challenge.maskedEmail,
            expiresAt: challenge.expiresAt)
        if first.isSentCode, first == challenge.availableMethods.first {
            step.codeSentTo = first == .sms ? challenge.maskedPhone : challenge.maskedEmail
        }
        step.clockSkew = ClockCheck.skew(serverTime: challenge.serverTime, receivedAt: now())
        return enter(.secondFactor(step))
    }

    private func send(_ step: SecondFactorStep) async -> SignInState {
        guard let flow else { return state }
        var step = step
        do {
            let sent = try await client.send(
                API.SecondStep.resendOTP, OTPResendRequest(otpFlowId: flow, method: step.method))
            step.codeSentTo = sent.maskedDestination
            step.resendAvailableAt = sent.nextAllowedAt
            step.problem = nil
        } catch {
            step.problem = Self.problem(error)
            if case .rateLimited(let seconds?) = step.problem {
                step.resendAvailableAt = now().addingTimeInterval(TimeInterval(seconds))
            }
            if step.problem == .flowExpired { return enter(.credentials(.flowExpired)) }
        }
        return enter(.secondFactor(step))
    }

    /// The second step's answer: the device remembered when the server gave a token for it
    /// (a store that cannot write loses only the remembering), then the session kept.
    private func completed(_ answer: SecondStepResponse) async -> SignInState {
        if let token = answer.trustedDeviceToken {
            try? await rememberedDevices?.keep(
                token, for: [answer.user.username, answer.user.email], at: client.origin)
        }
        await keepDeviceToken(answer.tokens)
        await session.signedIn(answer)
        return finish(answer.user, passkey: answer.passkeyName)
    }

    /// Where `rememberedDevices` keeps this device's sign-in tokens for `server`'s accounts
    /// (`AuthTokensResponse.deviceToken`), beside the remembered devices' own.
    public static func deviceTokens(_ server: String) -> String { server + " device" }

    /// Keeps the device token of a completed sign-in, sent with the account's next password
    /// sign-in so that strangers guessing its password elsewhere do not hold it shut (a store that
    /// cannot write loses only that).
    private func keepDeviceToken(_ tokens: AuthTokensResponse) async {
        guard let token = tokens.deviceToken else { return }
        try? await rememberedDevices?.keep(
            token, for: [tokens.user.username, tokens.user.email], at: Self.deviceTokens(client.origin))
    }

    private func finish(_ user: UserDTO, passkey: String? = nil) -> SignInState {
        flow = nil
        passkeyName = passkey
        return enter(.signedIn(user))
    }

    /// The second step after a failed try: the problem on the step, or back to the password
    /// when the flow is over.
    private func failed(_ step: SecondFactorStep, _ error: any Error) -> SignInState {
        // Started over while the request was out: the new state stands.
        guard case .working = state else { return state }
        let problem = Self.problem(error)
        if problem == .flowExpired {
            flow = nil
            return enter(.credentials(.flowExpired))
        }
        var step = step
        step.problem = problem
        switch problem {
        case .wrongCode(let left): step.attemptsRemaining = left
        case .locked(let until): step.lockedUntil = until
        default: break
        }
        return enter(.secondFactor(step))
    }

    /// What `error` means to the person signing in.
    static func problem(_ error: any Error) -> SignInProblem {
        switch error {
        case is PasskeyCancelled, is CancellationError:
            return .cancelled
        case let refusal as DeviceKeyRefusal:
            return .deviceKey(refusal.reason)
        case let error as APIError:
            guard let problem = error.problem else {
                return error.status >= 500 ? .offline : .refused(.internalError, "HTTP \(error.status)")
            }
            switch problem.code {
            case .invalidCredentials: return .invalidCredentials
            case .invalidCode, .signatureInvalid, .webauthnRefused:
                return .wrongCode(attemptsRemaining: problem.attemptsRemaining)
            case .locked, .accountLocked: return .locked(until: problem.lockoutUntil)
            case .rateLimited: return .rateLimited(retryAfter: error.retryAfter)
            // The flow's end names the flow; otherwise a code or challenge is what is used up,
            // and the step goes on.
            case .expired, .alreadyUsed:
                if problem.errors?["otpFlowId"] != nil { return .flowExpired }
                return problem.code == .expired ? .expired : .alreadyUsed
            // In a sign-in, the only thing to be unauthorised is the flow: unknown to the server.
            case .unauthorized: return .flowExpired
            case .serviceUnavailable: return .offline
            default: return .refused(problem.code, problem.detail ?? problem.title)
            }
        default:
            // No answer, or none this client can read: the network's trouble.
            return .offline
        }
    }
}

// MARK: Approve on your phone (issue Z), here for the flow's private state

extension SignInFlow {
    /// How long one wait for the phone lasts on the server before it answers `pending`.
    static let phoneWait = PushStatusRequest.longestWait

    /// "Approve on your phone": asks the account's phone to approve this sign-in. The step then
    /// carries the request (`approval`), whose number the screen shows; `waitForPhone()` waits.
    @discardableResult
    public func askPhone() async -> SignInState {
        guard case .secondFactor(var step) = state, let flow, step.methods.contains(.push) else { return state }
        step.method = .push
        enter(.working)
        do {
            step.approval = try await client.send(API.Push.start, PushStartRequest(otpFlowId: flow))
            step.problem = nil
            return enter(.secondFactor(step))
        } catch {
            step.approval = nil
            return failed(step, error)
        }
    }

    /// Waits for the phone's answer to the request `askPhone()` made, then signs in when it was
    /// approved; a denial, a wrong number or "This wasn't me" is the step's problem, in the
    /// server's words. Each wait is a long poll the server answers as soon as the phone does;
    /// calls are never closer than a second apart. Cancelling the task stops waiting.
    @discardableResult
    public func waitForPhone(rememberDevice: Bool = false) async -> SignInState {
        guard case .secondFactor(var step) = state, let flow, let approval = step.approval else { return state }
        do {
            while true {
                let asked = Date()
                let answer = try await client.send(
                    API.Push.status,
                    PushStatusRequest(otpFlowId: flow, requestId: approval.requestId, wait: Self.phoneWait))
                guard case .secondFactor(let now) = state, now.approval == approval else { return state }
                switch answer.status {
                case .pending:
                    let spent = Date().timeIntervalSince(asked)
                    if spent < 1 { try await Task.sleep(for: .seconds(1 - spent)) }
                case .approved:
                    enter(.working)
                    let signedIn = try await client.send(
                        API.Push.complete,
                        PushCompleteRequest(
                            otpFlowId: flow, requestId: approval.requestId,
                            trustDevice: rememberDevice && canRememberDevice))
                    return await completed(signedIn)
                default:
                    step.approval = nil
                    step.problem = .refused(.forbidden, answer.message ?? "The phone did not approve this sign-in.")
                    if answer.status == .reported {
                        self.flow = nil
                        return enter(.credentials(step.problem))
                    }
                    return enter(.secondFactor(step))
                }
            }
        } catch is CancellationError {
            return state
        } catch {
            step.approval = nil
            enter(.working)
            return failed(step, error)
        }
    }
}
