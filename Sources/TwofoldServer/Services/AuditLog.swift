import Foundation
import TwofoldAPI

/// The security events the append-only `audit_events` table records (`Auditor` writes them).
enum AuditLog {
    /// The kinds of event, as stored in `type`.
    enum Event: String {
        case userRegistered = "user.registered"
        case adminCreated = "admin.created"
        case loginSucceeded = "login.succeeded"
        case loginFailed = "login.failed"
        case loginThrottled = "login.throttled"
        case loginSecondFactorRequired = "login.second_factor_required"
        case refreshTokenReused = "token.refresh_reused"
        case sessionRevoked = "session.revoked"
        case allSessionsRevoked = "session.revoked_all"
        case userUnlocked = "admin.user_unlocked"
        case factorAdded = "factor.added"
        case factorRemoved = "factor.removed"
        case lockout = "lockout"
        case accountLocked = "account.locked"
        case trustedDeviceAdded = "trusted_device.added"
        case trustedDeviceRevoked = "trusted_device.revoked"
        case loginTrustedDevice = "login.trusted_device"
        case passwordChanged = "account.password_changed"
        case phoneChanged = "account.phone_changed"
        case emailChanged = "account.email_changed"
        case devicePinSet = "device.pin_set"
        case devicePinBlocked = "device.pin_blocked"
        case devicePinUnblocked = "device.pin_unblocked"
        case deviceBiometricsAdded = "device.biometrics_added"
        case deviceBiometricsRemoved = "device.biometrics_removed"
        /// A passkey's signature counter did not grow: the authenticator may have been cloned.
        case passkeyPossibleClone = "passkey.possible_clone"
        /// A passkey's BE or BS flag changed between ceremonies (recorded, not refused).
        case passkeyBackupStateChanged = "passkey.backup_state_changed"
    }
}

/// Records security events in the audit log's store.
struct Auditor: Sendable {
    let store: any AuditStore
    let clock: ServerClock

    /// Records `event`. `detail` is free text for people; never put a secret in it.
    func record(
        _ event: AuditLog.Event, user: UUID?, actor: UUID? = nil, detail: String = "", origin: RequestOrigin
    ) async throws {
        try await store.append(entry(event, user: user, actor: actor, detail: detail, origin: origin))
    }

    /// The entry `record` would append now, for a statement that writes it with others.
    func entry(
        _ event: AuditLog.Event, user: UUID?, actor: UUID? = nil, detail: String = "", origin: RequestOrigin
    ) -> AuditEntry {
        let now = clock.now()
        return AuditEntry(
            id: SecureRandom.timeOrderedUUID(at: now), occurredAt: now, event: event, userID: user, actorID: actor,
            origin: origin, detail: detail)
    }

    /// Events, newest first (the admin's audit trail).
    func events(userID: UUID? = nil, type: String? = nil, offset: Int = 0, limit: Int = 50) async throws
        -> [AuditEventDTO]
    {
        try await store.events(userID: userID, type: type, offset: offset, limit: limit)
    }
}
