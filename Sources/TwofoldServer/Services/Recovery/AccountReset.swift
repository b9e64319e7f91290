import Foundation
import TwofoldAPI

/// Starting an account's second factors over, as one use case for the two ways it happens: an
/// administrator's reset (`POST /admin/users/{id}/reset-mfa`) and a completed recovery. Every
/// factor and everything that stands in for one goes (authenticator app, passkeys, device keys,
/// SMS and email codes, backup codes, remembered devices), every session is signed out, the
/// account and its factor lockouts are unlocked, and the owner is told at every address.
struct AccountReset: Sendable {
    let clock: ServerClock
    let audit: Auditor
    let users: any UserStore
    let totp: TOTPService
    let backupCodes: BackupCodeService
    let deviceKeys: DeviceKeyService
    let passkeys: PasskeyService
    let trustedDevices: TrustedDeviceService
    let sessions: SessionService
    let guards: FactorGuard
    let factorChanges: FactorChanges

    /// Removes every second factor of `user` and signs every session out. `actor` is the
    /// administrator, or `nil` for the owner's own recovery; `why` goes into the audit trail
    /// and the notice.
    /// `unlock: false` leaves a lock in place (a disowned recovery locks the account first).
    func removeEverySecondFactor(
        of user: User, actor: UUID?, why: String, unlock: Bool = true, origin: RequestOrigin
    ) async throws {
        let userID = user.id
        let now = clock.now()
        // As one reset (`SessionEpoch`): every session ends first, and none starts until the
        // factors are gone, so nobody adds a factor while the others go.
        let removed: [String] = try await sessions.reset(userID: userID) {
            _ = try await sessions.revokeAll(userID: userID, reason: why)
            var removed: [String] = []
            if try await totp.remove(userID: userID) { removed.append("authenticator app") }
            removed += Array(repeating: "passkey", count: try await passkeys.removeAll(userID: userID, origin: origin))
            let devices = try await deviceKeys.removeAll(userID: userID)
            removed += devices.map { _ in "device" }
            for channel in [DeliveryChannel.sms, .email]
            where try await users.disableCodes(channel, userID: userID, now: now) {
                removed.append(channel == .sms ? "SMS codes" : "email codes")
            }
            try await users.setPrimaryMethod(nil, userID: userID, now: now)
            // The number on file must be proven again before it signs in or receives step-up
            // codes: the phone may be what was lost, or what an attacker put there.
            try await users.unverifyPhone(userID: userID, now: now)
            try await backupCodes.deleteAll(for: userID)
            try await trustedDevices.revokeAll(userID: userID, origin: origin)
            return removed
        }
        if unlock {
            _ = try await users.unlock(userID: userID, now: now)
            try await guards.reset(userID: userID)
        }
        try await audit.record(
            .factorsReset, user: userID, actor: actor,
            detail: "\(why); removed: \(removed.isEmpty ? "nothing" : Self.counted(removed))", origin: origin)
        try await factorChanges.notify(
            user, subject: "The sign-in methods of your account were reset",
            body: "Twofold: every sign-in method of your account beside the password was removed (\(why)), and "
                + "every session was signed out. Set up a new one when you next sign in. If this was not you, "
                + "contact your administrator at once.")
    }

    /// `["passkey", "passkey", "device"]` → `2 passkey, 1 device`.
    private static func counted(_ items: [String]) -> String {
        var order: [String] = []
        var counts: [String: Int] = [:]
        for item in items {
            if counts[item] == nil { order.append(item) }
            counts[item, default: 0] += 1
        }
        return order.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
    }
}
