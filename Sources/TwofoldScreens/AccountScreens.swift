import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// Seed 000's 2FA settings hub: where the account stands (authenticator app, passkeys, backup
/// codes left, SMS and email codes) and the way to each setup. Turning the authenticator off is
/// a change the server guards: it asks for a factor first, which `stepUp` shows.
@MainActor @Observable
public final class SecurityHubModel {
    /// The account's factors as the server last said.
    public private(set) var status: TwoFactorStatus?
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    /// The step-up prompt the server's questions go to.
    public let stepUp: StepUpPrompt
    /// Where "Contact Support" leads (the operator's page or a `mailto:`); `nil`: not shown.
    public let support: URL?
    private let security: AccountSecurity

    /// The hub for `security`'s account; `stepUp` is the prompt its step-ups answer on, and
    /// `support` where a person with no backup codes left can ask for help.
    public init(security: AccountSecurity, stepUp: StepUpPrompt, support: URL? = nil) {
        (self.security, self.stepUp, self.support) = (security, stepUp, support)
    }

    /// Whether two-step sign-in is on.
    public var isProtected: Bool { status?.isEnabled ?? false }

    /// Seed 000's warning about backup codes, as the server flags it (`backupCodes.low`: 3 or
    /// fewer by default).
    public enum BackupCodesWarning: Sendable, Equatable {
        /// So few left that new ones should be made (yellow).
        case low(left: Int)
        /// None left (red): make new ones now; without another way in, contact support.
        case noneLeft
    }

    /// The backup-code warning to show, if any (only while two-step sign-in is on).
    public var backupCodesWarning: BackupCodesWarning? {
        guard let status, status.isEnabled, status.backupCodes.generatedAt != nil else { return nil }
        let left = status.backupCodes.remaining
        if left == 0 { return .noneLeft }
        return status.backupCodes.low ?? (left <= 3) ? .low(left: left) : nil
    }

    /// The summary line at the top of the hub.
    public var headline: String {
        guard let status else { return "" }
        guard status.isEnabled else { return "Two-step sign-in is off. Add a factor to protect your account." }
        switch backupCodesWarning {
        case .noneLeft?:
            return "Two-step sign-in is on, but you have no backup codes left. Make new ones now."
        case .low(let left)?:
            return "Two-step sign-in is on. Only \(left) backup \(left == 1 ? "code" : "codes") left: make new ones."
        case nil:
            return "Two-step sign-in is on."
        }
    }

    /// Reads the account's factors.
    public func load() async {
        await run { [security] in self.status = try await security.status() }
    }

    /// Turns the authenticator app off, after the proof the server asks for.
    public func removeAuthenticator() async {
        await run { [security] in
            try await security.removeAuthenticator()
            self.status = try await security.status()
        }
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        problem = await ScreenCall.problem(body)
    }
}

/// Seed 000's authenticator setup wizard: the QR code and the secret to copy, the first code
/// to confirm it, then the backup codes shown once when it is the first factor.
@MainActor @Observable
public final class AuthenticatorSetupModel {
    /// The wizard's step.
    public enum Step: Sendable, Equatable {
        /// What an authenticator app is; "Start".
        case intro
        /// Scan the QR code or type the secret, then enter the app's code.
        case scan(AuthenticatorSetup)
        /// Done; the backup codes to save when this was the first factor.
        case done(backupCodes: [String]?)
    }

    /// Where the wizard is.
    public private(set) var step: Step = .intro
    /// The code typed from the app.
    public private(set) var code = CodeEntry()
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    /// The last haptic to play.
    public private(set) var feedback: Feedback?
    /// Whether the secret was just copied ("Copied").
    public private(set) var copied = false
    private let security: AccountSecurity
    private var events = 0

    /// The wizard for `security`'s account.
    public init(security: AccountSecurity) { self.security = security }

    /// The secret grouped in fours, as a person types it.
    public var secretForReading: String {
        guard case .scan(let setup) = step else { return "" }
        return stride(from: 0, to: setup.secret.count, by: 4).map {
            let start = setup.secret.index(setup.secret.startIndex, offsetBy: $0)
            return String(setup.secret[start...].prefix(4))
        }.joined(separator: " ")
    }

    /// Starts: a new secret and its QR code.
    public func start() async {
        working = true
        defer { working = false }
        do {
            step = .scan(try await security.startAuthenticator())
            problem = nil
        } catch {
            fail(error)
        }
    }

    /// The secret for the pasteboard (the view copies it); shows "Copied".
    public func copySecret() -> String? {
        guard case .scan(let setup) = step else { return nil }
        copied = true
        return setup.secret
    }

    /// What was typed or pasted; a complete code confirms at once.
    public func type(_ text: String) async {
        code.paste(text)
        if code.isComplete { await confirm() }
    }

    /// Confirms the app with its code.
    public func confirm() async {
        guard case .scan = step, code.isComplete, !working else { return }
        working = true
        defer { working = false }
        do {
            let codes = try await security.confirmAuthenticator(code: code.submission)
            step = .done(backupCodes: codes)
            problem = nil
            buzz(.success)
        } catch {
            code.clear()
            fail(error)
        }
    }

    private func fail(_ error: any Error) {
        problem = SignInProblem.of(error)
        buzz(.error)
    }

    private func buzz(_ kind: Feedback.Kind) {
        events += 1
        feedback = Feedback(kind: kind, id: events)
    }
}

/// Seed 000's backup codes: shown once, copied or printed, and not left behind until the person
/// says "I've saved these"; new ones replace the old (a change the server guards).
@MainActor @Observable
public final class BackupCodesModel {
    /// The codes to show now (empty once saved and left).
    public private(set) var codes: [String]
    /// Whether the person confirmed they saved them.
    public var saved = false
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    private let security: AccountSecurity

    /// Codes a setup just gave (`codes`), or none yet, for `security`'s account.
    public init(security: AccountSecurity, codes: [String] = []) { (self.security, self.codes) = (security, codes) }

    /// The codes as one text, one per line, for copying or printing.
    public var text: String { codes.joined(separator: "\n") }

    /// Whether the screen may be left: no codes on show, or the person saved them.
    public var canFinish: Bool { codes.isEmpty || saved }

    /// New codes; the old ones stop working.
    public func regenerate() async {
        working = true
        defer { working = false }
        do {
            codes = try await security.regenerateBackupCodes()
            saved = false
            problem = nil
        } catch {
            problem = error is StepUpDeclined ? .cancelled : SignInProblem.of(error)
        }
    }

    /// Leaves the codes, once saved: they are not shown again.
    public func finish() {
        guard canFinish else { return }
        codes = []
        saved = false
    }
}

/// SMS or email codes turned on: the number (or the address on file), the code sent to it, and
/// the backup codes when it was the first factor.
@MainActor @Observable
public final class CodeChannelSetupModel {
    /// Which channel.
    public let channel: FactorMethod
    /// The phone number typed (SMS).
    public var phone = ""
    /// The code typed.
    public private(set) var code = CodeEntry()
    /// Where the code went (masked), once sent.
    public private(set) var sentTo: String?
    /// When another code may be sent.
    public private(set) var resendAvailableAt: Date?
    /// Turned on; the backup codes when it was the first factor.
    public private(set) var done: [String]??
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    private let security: AccountSecurity
    private let clock: @Sendable () -> Date

    /// Turns on `channel` (`.sms` or `.email`) for `security`'s account; `clock` tells the
    /// resend countdown the time.
    public init(
        security: AccountSecurity, channel: FactorMethod, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        precondition(channel.isSentCode, "SMS or email only")
        (self.security, self.channel, self.clock) = (security, channel, clock)
    }

    /// Seconds until another code may be sent (0: now).
    public func resendCountdown() -> Int {
        guard let at = resendAvailableAt else { return 0 }
        return max(0, Int(at.timeIntervalSince(clock()).rounded(.up)))
    }

    /// Whether "Send the code" (or "Send another") does anything now.
    public var canSend: Bool { !working && resendCountdown() == 0 }

    /// Sends the code (again, once the countdown is over).
    public func send() async {
        guard canSend else { return }
        await run { [security, channel, phone] in
            let sent =
                channel == .sms
                ? try await security.startSMS(phone: phone.isEmpty ? nil : phone) : try await security.startEmail()
            self.sentTo = sent.maskedDestination
            self.resendAvailableAt = sent.nextAllowedAt
        }
    }

    /// What was typed or pasted; a complete code confirms at once.
    public func type(_ text: String) async {
        code.paste(text)
        if code.isComplete { await confirm() }
    }

    /// Confirms with the code sent.
    public func confirm() async {
        guard sentTo != nil, code.isComplete else { return }
        await run { [security, channel, code] in
            let codes =
                channel == .sms
                ? try await security.confirmSMS(code: code.submission)
                : try await security.confirmEmail(code: code.submission)
            self.done = .some(codes)
        }
        if problem != nil { code.clear() }
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        problem = await ScreenCall.problem(body)
    }
}

/// Seed 000's passkeys: the list (provider, "Synced" or "This device only", last used), adding
/// one through the phone's passkey sheet, renaming and removing (with the step-up the server
/// asks for).
@MainActor @Observable
public final class PasskeysModel {
    /// The account's passkeys.
    public private(set) var passkeys: [PasskeyDTO] = []
    /// Backup codes a first passkey brought, to show once.
    public private(set) var backupCodes: [String]?
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    private let security: AccountSecurity

    /// Passkeys of `security`'s account (which makes new ones with its `PasskeyCreating`).
    public init(security: AccountSecurity) { self.security = security }

    /// Where a passkey lives, in words.
    public static func kind(_ passkey: PasskeyDTO) -> String {
        passkey.synced ? "Synced" : "This device only"
    }

    /// Reads the list.
    public func load() async {
        await run { [security] in self.passkeys = try await security.passkeys() }
    }

    /// Makes a passkey named `name` (the phone's sheet asks the person).
    public func add(name: String) async {
        await run { [security] in
            let added = try await security.addPasskey(name: name.isEmpty ? nil : name)
            self.backupCodes = added.backupCodes
            self.passkeys = try await security.passkeys()
        }
    }

    /// Renames a passkey.
    public func rename(_ id: String, to name: String) async {
        await run { [security] in
            _ = try await security.renamePasskey(id, to: name)
            self.passkeys = try await security.passkeys()
        }
    }

    /// Removes a passkey.
    public func remove(_ id: String) async {
        await run { [security] in
            try await security.removePasskey(id)
            self.passkeys = try await security.passkeys()
        }
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        problem = await ScreenCall.problem(body)
    }
}

/// Seed 000's last step: account recovery when every factor is lost. The email address and a
/// message for the reviewer, the code sent to that address, the request's state while an
/// administrator reviews it, and the pass from the approval email, which signs in once.
@MainActor @Observable
public final class RecoveryModel {
    /// The email address typed.
    public var email = ""
    /// What the person tells the reviewer.
    public var message = ""
    /// The code typed from the email.
    public private(set) var code = CodeEntry()
    /// The pass typed or opened from the approval email.
    public var pass = ""
    /// The pass came with the approval email's link opened in the app (`openLink(pass:)`): the
    /// screen says what using it does and waits for the person to choose to, as the web page does.
    public private(set) var fromLink = false
    /// The request as the server last described it.
    public private(set) var request: RecoveryStatus?
    /// Signed in with the pass: the app asks for a factor before anything else.
    public private(set) var signedIn: UserDTO?
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last.
    public private(set) var problem: SignInProblem?
    private let recovery: AccountRecovery
    private let session: SessionManager

    /// Recovery through `recovery`; the pass signs `session` in.
    public init(recovery: AccountRecovery, session: SessionManager) {
        (self.recovery, self.session) = (recovery, session)
    }

    /// Where the request stands, in words.
    public var stateText: String {
        if fromLink, request == nil {
            return "Signing in with this link removes every sign-in method of your account and signs out every "
                + "session. You then set up a new sign-in method."
        }
        return switch request?.state {
        case nil: "Tell us which account is yours. We'll email a code to its address."
        case .pendingEmail: "Enter the code we emailed you."
        case .pendingReview: "We're checking your request. This usually takes a day or two; we'll email you."
        case .approved: "Approved. Open the link in the email we sent, or paste the pass here."
        case .denied: "Your request was declined. Contact support."
        case .completed: "You're back in. Set up a new way to sign in."
        case .cancelled: "This request was cancelled."
        case .expired: "This request ran out of time. Start again."
        }
    }

    /// Starts the request.
    public func start() async {
        guard !email.isEmpty else { return }
        await run { [recovery, email, message] in
            self.request = try await recovery.start(email: email, message: message.isEmpty ? nil : message)
        }
    }

    /// What was typed or pasted; a complete code is sent at once.
    public func type(_ text: String) async {
        code.paste(text)
        if code.isComplete { await verify() }
    }

    /// The code from the email.
    public func verify() async {
        guard let id = request?.recoveryId, code.isComplete else { return }
        await run { [recovery, code] in self.request = try await recovery.verify(id, code: code.submission) }
        if problem != nil { code.clear() }
    }

    /// Reads where the request stands.
    public func refresh() async {
        guard let id = request?.recoveryId else { return }
        await run { [recovery] in self.request = try await recovery.status(id) }
    }

    /// Starts over with a new request (after one was denied, cancelled or ran out of time, or
    /// to correct the address): the fields and the request are cleared.
    public func restart() {
        guard !working else { return }
        (email, message, pass, request, problem, fromLink) = ("", "", "", nil, nil, false)
        code = CodeEntry()
    }

    /// The approval email's link, opened in the app: its pass, used only when the person taps
    /// "Sign in and set up a new method" after reading what it does.
    public func openLink(pass: String) {
        guard !working else { return }
        (self.pass, fromLink, problem) = (pass, true, nil)
    }

    /// Uses the pass: signed in once.
    public func redeem() async {
        guard !pass.isEmpty else { return }
        await run { [recovery, session, pass] in
            self.signedIn = try await recovery.redeem(pass: pass.trimmingCharacters(in: .whitespaces), into: session)
        }
    }

    private func run(_ body: @MainActor () async throws -> Void) async {
        working = true
        defer { working = false }
        problem = await ScreenCall.problem(body)
    }
}

/// A screen's call: what went wrong, in the model's terms, or `nil` when it worked. A step-up the
/// person declined is a cancel.
enum ScreenCall {
    @MainActor static func problem(_ body: @MainActor () async throws -> Void) async -> SignInProblem? {
        do {
            try await body()
            return nil
        } catch {
            return error is StepUpDeclined ? .cancelled : SignInProblem.of(error)
        }
    }
}
