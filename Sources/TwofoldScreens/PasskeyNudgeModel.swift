import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// Where the app keeps each account's `PasskeyNudge` (how often it was shown, whether a passkey
/// settled it).
public protocol PasskeyNudgeStore: Sendable {
    func nudge(for username: String) -> PasskeyNudge
    func save(_ nudge: PasskeyNudge, for username: String)
}

/// `PasskeyNudgeStore` in `UserDefaults` (the nudge is no secret: counts and a date), one JSON
/// value per account.
public final class DefaultsPasskeyNudgeStore: PasskeyNudgeStore, @unchecked Sendable {
    // Safe: `UserDefaults` is documented thread-safe; the field is set once.
    private let defaults: UserDefaults

    public init(defaults: UserDefaults = .standard) { self.defaults = defaults }

    public func nudge(for username: String) -> PasskeyNudge {
        defaults.data(forKey: Self.key(username)).flatMap { try? JSONDecoder().decode(PasskeyNudge.self, from: $0) }
            ?? PasskeyNudge()
    }

    public func save(_ nudge: PasskeyNudge, for username: String) {
        defaults.set(try? JSONEncoder().encode(nudge), forKey: Self.key(username))
    }

    private static func key(_ username: String) -> String { "twofold.passkeyNudge.\(username.lowercased())" }
}

/// `PasskeyNudgeStore` in memory (previews, tests).
public final class MemoryPasskeyNudgeStore: PasskeyNudgeStore, @unchecked Sendable {
    // Safe: `nudges` is read and written under `lock` only.
    private let lock = NSLock()
    private var nudges: [String: PasskeyNudge] = [:]

    public init() {}

    public func nudge(for username: String) -> PasskeyNudge {
        lock.withLock { nudges[username.lowercased()] ?? PasskeyNudge() }
    }

    public func save(_ nudge: PasskeyNudge, for username: String) {
        lock.withLock { nudges[username.lowercased()] = nudge }
    }
}

/// Seed 000's passkey nudge as a sheet: after a sign-in with an SMS, email or authenticator
/// code on an account with no passkey, "Sign in faster next time" offers one; "Maybe later"
/// shows it again after 7 days, 3 times at most (`PasskeyNudge`); a passkey made ends it.
@MainActor @Observable
public final class PasskeyNudgeModel {
    /// Whether the sheet shows.
    public private(set) var isShown = false
    /// A request is out.
    public private(set) var working = false
    /// What went wrong last (a declined passkey sheet, the server's refusal).
    public private(set) var problem: SignInProblem?
    private var username: String?
    private let security: AccountSecurity
    private let store: any PasskeyNudgeStore
    private let clock: @Sendable () -> Date

    /// The nudge for `security`'s account, kept in `store`; `clock` tells the 7 days.
    public init(
        security: AccountSecurity, store: any PasskeyNudgeStore, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        (self.security, self.store, self.clock) = (security, store, clock)
    }

    /// A sign-in completed for `username` with `method` (the last second step's; `nil` for a
    /// passkey or a remembered device): shows the sheet when the seed's schedule says so. An
    /// account whose passkeys cannot be read now is not nudged.
    public func signedIn(username: String, with method: FactorMethod?) async {
        guard let method else { return }
        var nudge = store.nudge(for: username)
        guard nudge.shouldShow(after: method, accountHasPasskey: false, now: clock()),
            let passkeys = try? await security.passkeys(), passkeys.isEmpty
        else { return }
        nudge.shown(at: clock())
        store.save(nudge, for: username)
        self.username = username
        problem = nil
        isShown = true
    }

    /// "Maybe later": the sheet goes; it may come back after 7 days.
    public func maybeLater() { isShown = false }

    /// "Create a passkey": the phone's passkey sheet, then never again for this account.
    public func addPasskey() async {
        guard let username else { return }
        working = true
        defer { working = false }
        problem = await ScreenCall.problem { [security] in
            _ = try await security.addPasskey(name: nil)
        }
        guard problem == nil else { return }
        var nudge = store.nudge(for: username)
        nudge.passkeyAdded()
        store.save(nudge, for: username)
        isShown = false
    }
}
