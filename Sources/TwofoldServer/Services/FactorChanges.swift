import Foundation
import TwofoldAPI

/// What happens around adding a factor, once `SignInPolicy` allowed it (issue S item 1, issue T):
/// - the factor is recorded on the adding session *before* it becomes usable
///   (`recordAdding`), so no step-up that finds it usable can miss the record: a factor added
///   in a session never vouches for that session;
/// - the user is told by email and SMS whenever a factor is added (`notifyAdded`), so a factor
///   they did not add does not go unnoticed.
struct FactorChanges: Sendable {
    let sessions: SessionService
    let deviceKeys: DeviceKeyService
    let passkeys: PasskeyService
    let outbox: Outbox
    let configuration: Configuration
    let clock: ServerClock

    /// The name a proof or an added factor is recorded under: `totp`, `sms`, `email`, `backup`,
    /// `deviceKey:<deviceId>` (one device's key, not every device's), `webauthn:<credential
    /// ID>` (one passkey) or `password` (`SessionProofs`).
    static func factorName(method: FactorMethod, deviceID: String? = nil, credentialID: String? = nil) -> String {
        switch method {
        case .deviceKey: "\(method.rawValue):\(deviceID ?? "")"
        case .webauthn: "\(method.rawValue):\(credentialID ?? "")"
        default: method.rawValue
        }
    }

    /// Records on the caller's session that it adds `factors`. Called before the factor is
    /// stored: were the addition to fail after, the session only loses a proof it never had.
    func recordAdding(_ factors: [String], caller: AuthenticatedUser) async throws {
        try await sessions.recordAdded(factors, sessionID: caller.sessionID)
    }

    /// Records `factor` (a name from `factorName`) and, when the account had none, the backup
    /// codes made with it: a first factor brings them, and they never vouch for this session either.
    func recordAdding(_ factor: String, withNewBackupCodes: Bool, caller: AuthenticatedUser) async throws {
        try await recordAdding(
            withNewBackupCodes ? [factor, Self.factorName(method: .backup)] : [factor], caller: caller)
    }

    /// Tells the user that `description` was added.
    func notifyAdded(_ description: String, user: User) async throws {
        try await notify(
            user, subject: "A sign-in method was added to your account",
            body: "Twofold: \(description) was added to your account. If this was not you, sign in, remove it "
                + "and change your password.")
    }

    /// Sends `body` to the user's email address and, when one is verified, phone number.
    func notify(_ user: User, subject: String, body: String) async throws {
        let now = clock.now()
        if configuration.delivers(.email) {
            try await outbox.enqueue(.email, to: user.email, subject: subject, body: body, now: now)
        }
        if configuration.delivers(.sms), let sms = user.verifiedPhone {
            try await outbox.enqueue(.sms, to: sms, body: body, now: now)
        }
    }

    /// What can still sign in to the account without its password, in words for a notice
    /// (issue T item 3): device keys, SMS sign-in devices and passkeys. Each is named by what it
    /// is and when it was added (a passkey also by its provider), never by a name or model its
    /// adder chose.
    func withoutPassword(userID: UUID) async throws -> String {
        var items: [String] = []
        for device in try await deviceKeys.store.devices(userID: userID) {
            items.append(
                device.method == .secureEnclave
                    ? "a device key enrolled \(Self.day(device.enrolledAt))"
                    : "SMS sign-in for a device enrolled \(Self.day(device.enrolledAt))")
        }
        for passkey in try await passkeys.list(userID: userID) {
            items.append(
                "a passkey from \(passkey.provider ?? "an unknown provider") added \(Self.day(passkey.createdAt))")
        }
        guard !items.isEmpty else { return "Nothing else can sign in to your account without the password." }
        return "These can still sign in without the password: " + items.joined(separator: "; ")
            + ". Remove any you do not recognise."
    }

    /// `2026-11-25 22:46 UTC`: when something was added, for a notice.
    static func moment(_ date: Date) -> String {
        let text = ISO8601DateFormatter.string(
            from: date, timeZone: .gmt, formatOptions: [.withFullDate, .withTime, .withColonSeparatorInTime])
        return text.replacingOccurrences(of: "T", with: " ").prefix(16) + " UTC"
    }

    static func day(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withFullDate]) + " (UTC)"
    }
}
