import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// Seed 003's auth guard with seed 002's app lock: which screen the app shows. Until the kept
/// session has been read, neither screen (no flash of the sign-in screen); signed in, the
/// protected screens, behind the app lock when it is on. The lock is a convenience gate only:
/// it shows a session the phone already keeps and proves nothing to the server, so a failed or
/// cancelled lock never signs out, and signing in always takes the server's factors.
@MainActor @Observable
public final class AppModel {
    /// The screen to show.
    public enum Screen: Sendable, Equatable {
        /// The kept session is being read.
        case launching
        /// A session may be kept but the store is not readable yet (before the first unlock).
        case waitingForStore
        /// No session: the sign-in screen.
        case signIn
        /// Signed in, the app lock is on: unlock first.
        case locked(UserDTO)
        /// Signed in: the protected screens.
        case home(UserDTO)
    }

    /// The screen to show now.
    public private(set) var screen: Screen = .launching
    /// Whether the app lock is on (the person's choice in settings; `setLock(_:)` changes it).
    public private(set) var lockEnabled: Bool
    /// Why the last unlock did not happen, in words.
    public private(set) var lockProblem: String?
    /// The session the screens use.
    public let session: SessionManager
    /// Whether the server could not be reached the last time the app asked (seed 003): the
    /// protected screens show that they are offline, with "Try again" (`checkConnection()`).
    public private(set) var isOffline = false
    /// Changes made offline and not yet sent, as of the last check, oldest first (each with its
    /// `summary` in words and when it was made).
    public private(set) var waiting: [QueuedChange] = []
    /// How many changes wait.
    public var waitingChanges: Int { waiting.count }
    /// Seed 000's warning for a phone that looks jailbroken, until the person goes on
    /// (`integrityWarningSeen()`); `nil` on any other phone.
    public private(set) var integrityWarning: String?
    /// A link opened in the app (seed 000's `twofold://` links, an `otpauth://` URI, the recovery
    /// email's link), kept until the screen it leads to can show it (`linkToShow`).
    public private(set) var link: DeepLink?
    private let gate: (any BiometricGate)?
    private let queue: OfflineQueue?

    /// An app on `session`; `gate` is the app lock's prompt (none: no lock offered); `queue`
    /// keeps the changes made offline, sent when the server answers again.
    public init(
        session: SessionManager, gate: (any BiometricGate)? = nil, lockEnabled: Bool = false,
        queue: OfflineQueue? = nil
    ) {
        (self.session, self.gate, self.lockEnabled, self.queue) = (session, gate, lockEnabled && gate != nil, queue)
    }

    /// Asks the server whether it can be reached (at launch, on return to the foreground, and
    /// from the offline state's "Try again"): a current token and the account. When it answers,
    /// the changes queued offline are sent, in order. Signed out, nothing is asked. Whether the
    /// server answered.
    @discardableResult
    public func checkConnection() async -> Bool {
        guard session.currentUser != nil else {
            isOffline = false
            return true
        }
        do {
            let token = try await session.accessToken()
            _ = try await session.client.send(API.Account.show, bearer: token)
            isOffline = false
            if let queue {
                _ = try? await queue.replay()
            }
        } catch is CancellationError {
            return !isOffline
        } catch {
            isOffline = SignInProblem.of(error) == .offline
        }
        if let queue { waiting = (try? await queue.waiting) ?? waiting }
        return !isOffline
    }

    /// Whether an app lock can be offered.
    public var canLock: Bool { gate != nil }

    /// Turns the app lock on or off (on only when it can be offered).
    public func setLock(_ enabled: Bool) {
        lockEnabled = enabled && canLock
    }

    /// Follows the session for as long as the app runs (call it once, from the root view's task):
    /// a session signed in anywhere in the app shows the protected screens (a sign-in just made,
    /// unlocked; a kept one restored, behind the lock when it is on), and one that ended — signed
    /// out, or refused by the server when a call or a refresh found it revoked — the sign-in
    /// screen, wherever the app was.
    public func follow() async {
        for await state in await session.states() {
            switch (state, screen) {
            case (.checking, _): break
            case (.signedIn(let user), .home): screen = .home(user)
            case (.signedIn(let user), .locked): screen = .locked(user)
            case (.signedIn(let user), .signIn):
                lockProblem = nil
                screen = .home(user)
            default: show(state)
            }
            if case .signIn = screen { lockProblem = nil }
        }
    }

    /// Reads the kept session (on launch, and when the store becomes readable).
    public func launch() async {
        screen = .launching
        show(await session.restore())
    }

    /// Looks for signs of a jailbroken phone (once a launch): a warning the person may dismiss
    /// and go on.
    public func checkIntegrity(_ check: any DeviceIntegrityCheck) async {
        integrityWarning = await check.looksCompromised() ? Self.integrityWarningText : nil
    }

    /// "Continue anyway": the warning goes, and the app works as on any phone.
    public func integrityWarningSeen() { integrityWarning = nil }

    /// The app comes back to the foreground: locked again when the lock is on.
    public func didEnterForeground() {
        if case .home(let user) = screen, lockEnabled { screen = .locked(user) }
    }

    /// The sign-in screen finished: the protected screens.
    public func signedIn(_ user: UserDTO, with passkey: String? = nil) {
        lockProblem = nil
        screen = .home(user)
        signedInWith = passkey.map { "Signed in with \($0)" }
    }

    /// Seed 000's confirmation after a passkey sign-in ("Signed in with <name>"), shown once over
    /// the protected screens; `nil` after any other sign-in and once shown (`signedInWithShown()`).
    public private(set) var signedInWith: String?

    /// The confirmation was shown.
    public func signedInWithShown() { signedInWith = nil }

    /// Asks the gate to unlock; a cancel or failure leaves the app locked (and signed in).
    public func unlock() async {
        guard case .locked(let user) = screen, let gate else { return }
        do {
            try await gate.unlock(reason: "Unlock Twofold")
            lockProblem = nil
            screen = .home(user)
        } catch {
            lockProblem = error == .userCancel ? "Unlock to see your account." : error.message
        }
    }

    /// Opens `url` (`onOpenURL`, and a universal link of the server's recovery page): a link
    /// this app handles waits in `link`; whether it was one.
    @discardableResult
    public func open(_ url: URL) -> Bool {
        guard let parsed = DeepLink.parse(url, server: session.client.baseURL), takes(parsed) else { return false }
        link = parsed
        return true
    }

    /// Whether `link` is kept: a recovery link is for getting in, so one opened while signed in
    /// is not kept for some later sign-out.
    private func takes(_ link: DeepLink) -> Bool {
        guard case .recovery = link else { return true }
        switch screen {
        case .home, .locked: return false
        default: return true
        }
    }

    /// A link read another way (seed 000's QR scanner, `CodeScannerModel`): it waits for its
    /// screen as a link opened in the app does.
    public func open(_ link: DeepLink) {
        if takes(link) { self.link = link }
    }

    /// The link a screen may show now: the recovery link while signed out, any other once the
    /// protected screens show (signed in, unlocked); until then it waits.
    public var linkToShow: DeepLink? {
        switch (link, screen) {
        case (.recovery?, .signIn): link
        case (.recovery?, _): nil
        case (_?, .home): link
        default: nil
        }
    }

    /// The screen the link led to was shown (or dismissed).
    public func linkShown() { link = nil }

    /// Signs out here and at the server.
    public func signOut() async {
        await session.signOut()
        lockProblem = nil
        screen = .signIn
    }

    private func show(_ state: AuthState) {
        switch state {
        case .checking: screen = .launching
        case .waitingForStore: screen = .waitingForStore
        case .signedOut: screen = .signIn
        case .signedIn(let user): screen = lockEnabled ? .locked(user) : .home(user)
        }
    }
}

extension AppModel {
    /// The seed's words for a phone that looks jailbroken.
    public static let integrityWarningText =
        "This iPhone looks jailbroken. Apps on it may be able to read what Twofold keeps, such as "
        + "your session. You can go on, but your account is safer on a phone that isn't jailbroken."
}
