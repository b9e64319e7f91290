import Foundation
import TwofoldAPI
import TwofoldCore

/// Seed 000's passkey nudge: after a sign-in with an SMS or authenticator code, on an account
/// with no passkey, a sheet offers to set one up; "Maybe later" shows it again after 7 days, at
/// most 3 times in all. The app keeps this value (it is `Codable`) per account.
public struct PasskeyNudge: Codable, Sendable, Equatable {
    /// How long after a "Maybe later" the nudge may show again: 7 days, in seconds.
    public static let again: TimeInterval = 7 * 24 * 3600
    /// How many times in all the nudge shows.
    public static let maximumShows = 3

    /// How many times the nudge has been shown.
    public private(set) var shows = 0
    /// When the nudge was last shown, if ever.
    public private(set) var lastShown: Date?
    /// A passkey was set up: never again.
    public private(set) var settled = false

    /// A nudge never shown yet.
    public init() {}

    /// Whether to show the nudge after a sign-in completed with `method`.
    public func shouldShow(after method: FactorMethod, accountHasPasskey: Bool, now: Date) -> Bool {
        guard !settled, !accountHasPasskey, [.sms, .totp, .email].contains(method), shows < Self.maximumShows
        else { return false }
        guard let lastShown else { return true }
        return now.timeIntervalSince(lastShown) >= Self.again
    }

    /// The sheet was shown (and dismissed with "Maybe later").
    public mutating func shown(at now: Date) {
        shows += 1
        lastShown = now
    }

    /// A passkey was set up.
    public mutating func passkeyAdded() { settled = true }
}

/// Seed 000: "show a warning if the device clock is more than 30 s off" — an authenticator
/// app on a phone whose clock is off makes codes the server refuses.
public enum ClockCheck {
    /// How far off the clock may be before the warning shows, in seconds.
    public static let tolerance: TimeInterval = 30

    /// How far this device's clock is ahead of the server's (negative: behind), when that is more
    /// than `tolerance`; `serverTime` as the server sent it, `receivedAt` by this device's clock.
    public static func skew(serverTime: Date, receivedAt: Date) -> TimeInterval? {
        let skew = receivedAt.timeIntervalSince(serverTime)
        return abs(skew) > tolerance ? skew : nil
    }
}

/// Where a link opened in the app leads (seed 000's deep links and `otpauth://` URIs).
public enum DeepLink: Sendable, Equatable {
    /// The two-factor settings (`twofold://settings/2fa`).
    case twoFactorSettings
    /// The authenticator app's setup (`twofold://settings/2fa/setup-totp`).
    case setUpAuthenticator
    /// Adding a passkey (`twofold://settings/2fa/add-passkey`).
    case addPasskey
    /// The backup codes (`twofold://settings/2fa/backup-codes`).
    case backupCodes
    /// Account recovery, with the token the recovery email carried.
    case recovery(token: String)
    /// An authenticator-app secret to add (`otpauth://totp/…`).
    case authenticator(OTPAuthURI)

    /// The link `url` names, under the app's `scheme` (`twofold://settings/2fa`, …), or `nil` for
    /// one this app does not handle. An `otpauth://` URI is parsed whole and must be well formed.
    /// A web link is the app's only when it is `server`'s recovery pass page (the recovery
    /// email's link, opened in the app as a universal link): same scheme, host and port.
    public static func parse(_ url: URL, scheme: String = "twofold", server: URL? = nil) -> DeepLink? {
        let given = url.scheme?.lowercased()
        if given == "otpauth" {
            return (try? OTPAuthURI(parsing: url.absoluteString)).map(DeepLink.authenticator)
        }
        if given == "https" || given == "http" {
            guard let server, given == server.scheme?.lowercased(), let host = url.host?.lowercased(),
                host == server.host?.lowercased(), url.port == server.port,
                let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                components.path == "/" + Pages.recoveryPass.path
            else { return nil }
            return recovery(components)
        }
        guard given == scheme.lowercased(), let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        // `scheme://settings/2fa`: the host is the first piece of the path.
        let pieces = ([components.host ?? ""] + components.path.split(separator: "/").map(String.init))
            .filter { !$0.isEmpty }
        switch pieces {
        case ["settings", "2fa"]: return .twoFactorSettings
        case ["settings", "2fa", "setup-totp"]: return .setUpAuthenticator
        case ["settings", "2fa", "add-passkey"]: return .addPasskey
        case ["settings", "2fa", "backup-codes"]: return .backupCodes
        case ["2fa", "recovery"]: return recovery(components)
        default: return nil
        }
    }

    /// The recovery link of `components`' one `token`, or `nil`.
    private static func recovery(_ components: URLComponents) -> DeepLink? {
        let tokens = (components.queryItems ?? []).filter { $0.name == "token" }
        guard tokens.count == 1, let token = tokens[0].value, !token.isEmpty, token.count <= 512 else { return nil }
        return .recovery(token: token)
    }
}

extension DeepLink: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The link's kind; a recovery token or an authenticator secret shows as `‹redacted›`.
    public var description: String {
        switch self {
        case .twoFactorSettings: "twoFactorSettings"
        case .setUpAuthenticator: "setUpAuthenticator"
        case .addPasskey: "addPasskey"
        case .backupCodes: "backupCodes"
        case .recovery: "recovery(token: ‹redacted›)"
        case .authenticator(let uri): "authenticator(\(uri))"
        }
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["link": description], displayStyle: .enum) }
}
