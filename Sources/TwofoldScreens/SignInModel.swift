import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// Seed 003's login and verify-code screens and seed 002's challenge screen, on the SDK's
/// `SignInFlow`: the account name and password (or a passkey alone), then the second step
/// with a tab per method the account has, the code input with paste, the resend countdown,
/// "remember this device", attempts left and the lockout, and the way down the fallback chain
/// to recovery. Every decision is here; a view renders `phase`, `step` and `problem`.
@MainActor @Observable
public final class SignInModel {
    /// Where the sign-in is.
    public enum Phase: Sendable, Equatable {
        /// The account name and password (or a passkey).
        case credentials
        /// A request is out.
        case working
        /// The second step: `step` says which method and how it stands.
        case challenge
        /// Signed in: the auth guard shows the protected screens.
        case signedIn(UserDTO)
        /// Every method was set aside: account recovery.
        case recovery
    }

    /// The email address or username typed.
    public var name = ""
    /// The password typed.
    public var password = ""
    /// The code typed for the chosen method.
    public private(set) var code = CodeEntry()
    /// "Remember this device" (offered when `canRememberDevice`).
    public var rememberDevice = false
    /// Where the sign-in is.
    public private(set) var phase: Phase = .credentials
    /// The second step as the server last described it.
    public private(set) var step: SecondFactorStep?
    /// What went wrong last, if anything.
    public private(set) var problem: SignInProblem?
    /// The name of the passkey that finished the sign-in, when one did: what "Signed in with
    /// <name>" says (`AppModel.signedIn(_:with:)`).
    public private(set) var passkeyName: String?
    /// The last haptic to play.
    public private(set) var feedback: Feedback?
    /// When the server takes the next try, as its last refusal said (a throttle's wait, a
    /// lockout's end): seed 000's "rate limited: countdown timer, inputs disabled".
    public private(set) var waitUntil: Date?

    private let flow: SignInFlow
    private let clock: @Sendable () -> Date
    private var events = 0

    /// A sign-in on `flow`; `clock` tells the countdowns the time.
    public init(flow: SignInFlow, clock: @escaping @Sendable () -> Date = { Date() }) {
        (self.flow, self.clock) = (flow, clock)
    }

    /// Whether "remember this device" can be offered.
    public var canRememberDevice: Bool { flow.canRememberDevice }

    /// The problem in words.
    public var message: String? { problem?.message }

    /// Whether the sign-in button does anything: not before the time the server gave.
    public var canSignIn: Bool {
        phase == .credentials && !name.isEmpty && !password.isEmpty && waitCountdown() == nil
    }

    /// Seconds until the server takes another try, after a throttle or a lockout said when;
    /// `nil` when it takes one now. The inputs it would refuse are disabled meanwhile.
    public func waitCountdown() -> Int? {
        guard let waitUntil else { return nil }
        let left = Int(waitUntil.timeIntervalSince(clock()).rounded(.up))
        return left > 0 ? left : nil
    }

    /// The account is locked (seed 000's full-screen lockout, with a way to support): the
    /// server refused the credentials as locked, for a time it gave that has not passed, or
    /// until an administrator or a recovery opens it.
    public var isLockedOut: Bool {
        guard phase == .credentials, case .locked(let until) = problem else { return false }
        return until.map { $0 > clock() } ?? true
    }

    /// The full-screen lockout's words: what happened and, when the server gave a time, the
    /// time left (`nil` when not locked out).
    public func lockoutMessage() -> String? {
        guard isLockedOut else { return nil }
        guard let left = waitCountdown() else {
            return "This account is locked to keep it safe. Recover your account, or contact support to have it "
                + "unlocked."
        }
        return "Too many failed attempts. For your security, this account is locked. Try again in "
            + Self.clockTime(left) + "."
    }

    /// `14:32`, or `1:02:05` past an hour.
    static func clockTime(_ seconds: Int) -> String {
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        let tail = String(format: "%02d", rest)
        return hours > 0 ? "\(hours):" + String(format: "%02d", minutes) + ":" + tail : "\(minutes):" + tail
    }

    /// The second step's tabs: the account's methods in the fallback chain's order.
    public var tabs: [FactorMethod] {
        guard let step else { return [] }
        return SignInFlow.chain.filter(step.methods.contains)
    }

    /// The chosen method.
    public var method: FactorMethod? { step?.method }

    /// A tab's title.
    public static func title(_ method: FactorMethod) -> String {
        switch method {
        case .webauthn: "Passkey"
        case .deviceKey: "This device"
        case .totp: "Authenticator"
        case .sms: "Text message"
        case .email: "Email"
        case .backup: "Backup code"
        default: method.rawValue
        }
    }

    /// What the chosen method asks of the person.
    public var instructions: String {
        switch step?.method {
        case .webauthn: "Use your passkey to finish signing in."
        case .deviceKey: "Confirm with this device's Face ID, Touch ID or passcode."
        case .totp: "Enter the 6-digit code from your authenticator app."
        case .sms: "Enter the 6-digit code we texted to \(step?.codeSentTo ?? step?.maskedPhone ?? "your phone")."
        case .email: "Enter the 6-digit code we emailed to \(step?.codeSentTo ?? step?.maskedEmail ?? "you")."
        case .backup: "Enter one of your backup codes. Each works once."
        default: ""
        }
    }

    /// Seconds until another code may be sent (0: now); `nil` for a method that sends none.
    public func resendCountdown() -> Int? {
        guard let step, step.method.isSentCode else { return nil }
        guard let at = step.resendAvailableAt else { return 0 }
        return max(0, Int(at.timeIntervalSince(clock()).rounded(.up)))
    }

    /// Seconds left in the authenticator app's 30-second period (seed 002's countdown beside the
    /// code input: a code about to change is better typed after it does); `nil` for other methods.
    public func totpCountdown() -> Int? {
        guard step?.method == .totp else { return nil }
        let period = 30
        return period - Int(clock().timeIntervalSince1970.rounded(.down)) % period
    }

    /// Seconds until the chosen method unlocks; `nil` when it is not locked.
    public func lockCountdown() -> Int? {
        guard let until = step?.lockedUntil else { return nil }
        let left = Int(until.timeIntervalSince(clock()).rounded(.up))
        return left > 0 ? left : nil
    }

    // MARK: Intents

    /// Signs in with the name and password.
    public func signIn() async {
        guard canSignIn else { return }
        phase = .working
        show(await flow.signIn(name, password: password))
    }

    /// Signs in with a passkey alone (the button, or the autofill bar through `asserter`).
    public func signInWithPasskey(using asserter: (any PasskeyAsserting)? = nil) async {
        phase = .working
        show(await flow.signInWithPasskey(using: asserter))
        passkeyName = await flow.passkeyName
    }

    /// Offers passkeys in the keyboard's autofill bar while the credentials are on screen (call it
    /// as the screen appears, with an asserter making autofill-assisted requests; end it by
    /// cancelling that request as the screen goes). The form stays usable meanwhile; a passkey
    /// picked signs in, and a request that ends unpicked changes nothing.
    public func offerPasskeysInAutofill(using asserter: any PasskeyAsserting) async {
        guard phase == .credentials else { return }
        if let state = await flow.signInWithAutofilledPasskey(using: asserter) {
            show(state)
            passkeyName = await flow.passkeyName
        }
    }

    /// Picks a tab; for SMS or email the code is sent.
    public func select(_ method: FactorMethod) async {
        guard phase == .challenge, step?.method != method || method.isSentCode else { return }
        phase = .working
        show(await flow.choose(method))
    }

    /// What was typed or pasted into the code field; a complete code is submitted at once.
    public func type(_ text: String) async {
        code.update(text)
        if code.isComplete { await submit() }
    }

    /// Pasted text: the code found in it, submitted when complete.
    public func paste(_ text: String) async {
        code.paste(text)
        if code.isComplete { await submit() }
    }

    /// Submits the code typed.
    public func submit() async {
        guard phase == .challenge, code.isComplete, lockCountdown() == nil, waitCountdown() == nil else { return }
        phase = .working
        show(await flow.submit(code: code.submission, rememberDevice: rememberDevice))
    }

    /// Sends another code (after the countdown).
    public func resend() async {
        guard phase == .challenge, resendCountdown() == 0, waitCountdown() == nil else { return }
        phase = .working
        show(await flow.resend())
    }

    /// The passkey prompt as the second factor.
    public func usePasskey() async {
        guard phase == .challenge else { return }
        phase = .working
        show(await flow.usePasskey(rememberDevice: rememberDevice))
        passkeyName = await flow.passkeyName
    }

    /// The device key's prompt as the second factor.
    public func useDeviceKey() async {
        guard phase == .challenge else { return }
        phase = .working
        show(await flow.useDeviceKey(rememberDevice: rememberDevice))
    }

    /// "Try another way": the next method in the chain, or recovery after the last.
    public func tryAnotherWay() async {
        show(await flow.fallBack())
    }

    /// Back to the account name and password.
    public func startOver() async {
        password = ""
        show(await flow.restart())
    }

    private func show(_ state: SignInState) {
        // The passkey intents read the passkey's name after this; any other outcome has none.
        passkeyName = nil
        switch state {
        case .credentials(let problem):
            phase = .credentials
            step = nil
            self.problem = problem
            waitUntil = Self.nextTry(after: problem, now: clock())
            if problem != nil { buzz(.error) }
        case .working:
            phase = .working
        case .secondFactor(let new):
            if new.method != step?.method { code = CodeEntry(for: new.method) }
            phase = .challenge
            step = new
            problem = new.problem
            waitUntil = Self.nextTry(after: new.problem, now: clock())
            if new.problem != nil {
                code.clear()
                buzz(.error)
            }
        case .signedIn(let user):
            phase = .signedIn(user)
            problem = nil
            waitUntil = nil
            password = ""
            code.clear()
            buzz(.success)
        case .recovery:
            phase = .recovery
            problem = nil
            waitUntil = nil
        }
    }

    /// When the server takes another try after `problem`: a throttle's wait from `now`, a lockout's end.
    static func nextTry(after problem: SignInProblem?, now: Date) -> Date? {
        switch problem {
        case .rateLimited(let seconds?) where seconds > 0: now.addingTimeInterval(TimeInterval(seconds))
        case .locked(let until?): until
        default: nil
        }
    }

    private func buzz(_ kind: Feedback.Kind) {
        events += 1
        feedback = Feedback(kind: kind, id: events)
    }
}
