import Foundation
import TwofoldAPI
import TwofoldSQLite

/// The kinds of security event the append-only `audit_events` table records, as stored in
/// `type` (`Auditor` writes them).
enum AuditEvent: String, Sendable {
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
    case emailVerified = "account.email_verified"
    case passwordResetRequested = "account.password_reset_requested"
    case passwordReset = "account.password_reset"
    case devicePinSet = "device.pin_set"
    case devicePinBlocked = "device.pin_blocked"
    case devicePinUnblocked = "device.pin_unblocked"
    case deviceBiometricsAdded = "device.biometrics_added"
    case deviceBiometricsRemoved = "device.biometrics_removed"
    /// A passkey's signature counter did not grow: the authenticator may have been cloned.
    case passkeyPossibleClone = "passkey.possible_clone"
    /// A passkey's BE or BS flag changed between ceremonies (recorded, not refused).
    case passkeyBackupStateChanged = "passkey.backup_state_changed"
    /// Every second factor removed: an administrator's reset, or a completed recovery.
    case factorsReset = "account.factors_reset"
    /// A reset cut short (its server stopped) was closed by housekeeping once its claim ran out:
    /// sign-ins start again, and what it had not removed yet is still there.
    case resetInterrupted = "account.reset_interrupted"
    case pushRequested = "push.requested"
    case pushApproved = "push.approved"
    case pushDenied = "push.denied"
    case pushWrongNumber = "push.wrong_number"
    case pushReported = "push.reported"
    case pushPaused = "push.paused"
    case pushBudgetSpent = "push.budget_spent"
    case recoveryStarted = "recovery.started"
    case recoveryEmailProven = "recovery.email_proven"
    case recoveryApproved = "recovery.approved"
    /// An administrator opened a request's identity document.
    case recoveryDocumentViewed = "recovery.document_viewed"
    case recoveryDenied = "recovery.denied"
    case recoveryCancelled = "recovery.cancelled"
    case recoveryCompleted = "recovery.completed"
    /// "This wasn't me" after the pass was used: the account is locked for an administrator.
    case recoveryDisowned = "recovery.disowned"
}

/// One security event (`audit_events`, append-only).
struct AuditEntry: Sendable, Equatable {
    var id: UUID
    var occurredAt: Date
    var event: AuditEvent
    var userID: UUID?
    var actorID: UUID?
    var origin: RequestOrigin
    /// Free text for people; never a secret.
    var detail: String
}

/// The audit log's table (append-only: nothing updates or deletes its rows).
protocol AuditStore: Sendable {
    func append(_ entry: AuditEntry) async throws
    /// Events, newest first, of one user and of one type when given, `limit` of them after the
    /// first `offset`.
    /// Events, newest first; each filter that is given narrows them (`from` inclusive, `to` not).
    func events(userID: UUID?, type: String?, from: Date?, to: Date?, offset: Int, limit: Int) async throws
        -> [AuditEventDTO]
}

/// `AuditStore` on the server's database.
struct SQLAuditStore: AuditStore {
    let database: any SQLExecutor

    func append(_ entry: AuditEntry) async throws {
        try await database.run(Self.inserting(entry))
    }

    static func inserting(_ entry: AuditEntry) -> Statement {
        Statement(
            """
            INSERT INTO audit_events (id, occurred_at, type, user_id, actor_id, ip_address, user_agent, detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, .uuid(entry.id), .date(entry.occurredAt), .text(entry.event.rawValue), .uuid(entry.userID),
            .uuid(entry.actorID), .text(entry.origin.address), .text(entry.origin.userAgent),
            .text(entry.detail))
    }

    func events(userID: UUID?, type: String?, from: Date?, to: Date?, offset: Int, limit: Int) async throws
        -> [AuditEventDTO]
    {
        var conditions: [String] = []
        var values: [Statement.Value] = []
        if let from {
            conditions.append("occurred_at >= ?")
            values.append(.date(from))
        }
        if let to {
            conditions.append("occurred_at < ?")
            values.append(.date(to))
        }
        if let userID {
            conditions.append("user_id = ?")
            values.append(.uuid(userID))
        }
        if let type {
            conditions.append("type = ?")
            values.append(.text(type))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return try await database.rows(
            Statement(
                """
                SELECT id, occurred_at, type, user_id, actor_id, ip_address, user_agent, detail FROM audit_events\(filter)
                ORDER BY occurred_at DESC, id DESC LIMIT ? OFFSET ?
                """, values + [.integer(limit), .integer(offset)]),
            {
                AuditEventDTO(
                    id: try $0.uuid(0), occurredAt: try $0.date(1), type: try $0.text(2),
                    userId: try $0.optionalUUID(3),
                    actorId: try $0.optionalUUID(4), ipAddress: try $0.optionalText(5),
                    userAgent: try $0.optionalText(6),
                    detail: try $0.text(7))
            })
    }
}
