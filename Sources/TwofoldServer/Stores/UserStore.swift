import FluentKit
import Foundation
import TwofoldAPI
import TwofoldSQLite

/// Users (`users`). Each change is one statement that writes only the columns it is about, so
/// two changes at once (a lock and a new phone number, say) never undo each other.
protocol UserStore: Sendable {
    func user(id: UUID) async throws -> User?
    /// The user whose (canonical, lower-case) email address or username is `identifier`.
    func user(identifier: String) async throws -> User?
    /// Users in the order they registered, `limit` of them after the first `offset`; with `query`,
    /// only those whose username or email address holds it (case-insensitively).
    func users(matching query: String?, offset: Int, limit: Int) async throws -> [User]
    /// Writes a new account; `false` when its username or email address is taken.
    func insert(_ user: User) async throws -> Bool
    /// Many new accounts at once (`twofold-server bench-seed`); fails on any name taken.
    func insert(_ users: [User]) async throws
    /// Makes a locked account active again at `now`; whether this call did.
    func unlock(userID: UUID, now: Date) async throws -> Bool
    /// Locks an active account; whether this call did.
    func lock(userID: UUID, now: Date) async throws -> Bool
    /// Whether any account is an administrator (start-up says how to create the first).
    func hasAdministrator() async throws -> Bool
    /// How many of each stored second factor the user has, in one read (every second step asks).
    func storedFactors(userID: UUID) async throws -> StoredFactors
    /// Sets the password's hash, only while it is still `replacing` (the one the caller checked
    /// the current password against) and `addedBy` is live: of two changes at once, the later
    /// finds the hash changed, and a revoked session changes nothing. Whether this call did
    /// (throws `AddingSession.ended` when the session ended).
    func setPasswordHash(_ hash: String, userID: UUID, now: Date, replacing: String, addedBy: AddingSession?)
        async throws -> Bool
    /// Makes `phone` the verified number on file, while `addedBy` is live (throws
    /// `AddingSession.ended` when it is not).
    func setVerifiedPhone(_ phone: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws
    /// Keeps the number on file but no longer as proven (a reset: it must be proven again).
    func unverifyPhone(userID: UUID, now: Date) async throws
    /// Makes `email` the address on file, while `addedBy` is live (throws `AddingSession.ended`
    /// when it is not); `false` when another account uses it.
    func setEmail(_ email: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool
    /// Marks the address on file verified, only while it is still `email` (the address a link
    /// went to); whether this call did (or it already was).
    func verifyEmail(_ email: String, userID: UUID, now: Date) async throws -> Bool
    /// Whether an account other than `userID` has the address `email`.
    func emailInUse(_ email: String, except userID: UUID) async throws -> Bool
    /// Turns codes by `channel` on (for SMS, to `phone`, which becomes the verified number), while
    /// `addedBy` is live (throws `AddingSession.ended` when it is not).
    func enableCodes(_ channel: DeliveryChannel, phone: String?, userID: UUID, now: Date, addedBy: AddingSession?)
        async throws
    /// Turns codes by `channel` off, and clears it as the primary method; whether they were on.
    func disableCodes(_ channel: DeliveryChannel, userID: UUID, now: Date) async throws -> Bool
    func setPrimaryMethod(_ method: FactorMethod?, userID: UUID, now: Date) async throws
}

/// The user's second factors kept in their own tables (SMS and email are flags on the user),
/// each by what identifies it, so a proof can be checked against the credential it named.
struct StoredFactors: Sendable, Equatable {
    /// The active authenticator-app secret's ID.
    var totp: UUID?
    /// Each passkey's credential ID.
    var passkeys: Set<String> = []
    /// Each device holding a key, by device ID, with the key (stored base64).
    var deviceKeys: [String: String] = [:]
    /// Seed 004 devices enrolled for SMS sign-in, by device ID.
    var smsDevices: Set<String> = []
    var unusedBackupCodes = 0

    var activeTOTP: Int { totp == nil ? 0 : 1 }
}

/// One row of `storedFactors`' statement.
private struct StoredFactorRow: Sendable {
    let kind: String
    let secret: UUID?
    let name: String?
    let key: String?
    let count: Int
}

/// `UserStore` on the server's database.
struct SQLUserStore: UserStore {
    let database: any SQLExecutor

    private static let columns = """
        id, username, email, phone, role, status, password_hash, created_at, updated_at, sms_enabled, \
        email_enabled, primary_method, phone_verified_at, session_epoch, email_verified_at
        """

    private static func user(_ row: StatementRow) throws -> User {
        guard let role = User.Role(rawValue: try row.text(4)) else {
            throw StatementRowError(column: 4, reason: "is not a user role")
        }
        guard let status = User.Status(rawValue: try row.text(5)) else {
            throw StatementRowError(column: 5, reason: "is not a user status")
        }
        var user = User(
            id: try row.uuid(0), username: try row.text(1), email: try row.text(2), phone: try row.optionalText(3),
            role: role, passwordHash: try row.text(6), now: try row.date(7))
        user.status = status
        user.updatedAt = try row.date(8)
        user.smsEnabled = try row.bool(9)
        user.emailEnabled = try row.bool(10)
        user.primaryMethod = try row.optionalText(11).map(FactorMethod.init(rawValue:))
        user.phoneVerifiedAt = try row.optionalDate(12)
        user.sessionEpoch = try row.integer(13)
        user.emailVerifiedAt = try row.optionalDate(14)
        return user
    }

    func user(id: UUID) async throws -> User? {
        try await database.rows(Statement("SELECT \(Self.columns) FROM users WHERE id = ?", .uuid(id)), Self.user)
            .first
    }

    func user(identifier: String) async throws -> User? {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM users WHERE email = ? OR username = ?", .text(identifier),
                .text(identifier)), Self.user
        ).first
    }

    func users(matching query: String?, offset: Int, limit: Int) async throws -> [User] {
        guard let query else {
            return try await database.rows(
                Statement(
                    "SELECT \(Self.columns) FROM users ORDER BY created_at LIMIT ? OFFSET ?", .integer(limit),
                    .integer(offset)), Self.user)
        }
        // Usernames and addresses are stored lower-case; `\` escapes the pattern's own characters.
        let pattern =
            "%"
            + query.lowercased().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await database.rows(
            Statement(
                """
                SELECT \(Self.columns) FROM users WHERE username LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\'
                ORDER BY created_at LIMIT ? OFFSET ?
                """, .text(pattern), .text(pattern), .integer(limit), .integer(offset)), Self.user)
    }

    func insert(_ user: User) async throws -> Bool {
        // `sms_enabled` and `email_enabled` take their defaults (off), as for every new account.
        try await database.changes(
            Statement(
                """
                INSERT INTO users (id, username, email, phone, role, status, password_hash, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """, .uuid(user.id), .text(user.username), .text(user.email), .text(user.phone),
                .text(user.role.rawValue), .text(user.status.rawValue), .text(user.passwordHash),
                .date(user.createdAt), .date(user.updatedAt))) > 0
    }

    func insert(_ users: [User]) async throws {
        try await database.insert(
            into: "users", columns: "id, username, email, phone, role, status, password_hash, created_at, updated_at",
            rows: users.map {
                [
                    .uuid($0.id), .text($0.username), .text($0.email), .text($0.phone), .text($0.role.rawValue),
                    .text($0.status.rawValue), .text($0.passwordHash), .date($0.createdAt), .date($0.updatedAt),
                ]
            })
    }

    func unlock(userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE users SET status = 'active', updated_at = ? WHERE id = ? AND status = 'locked'", .date(now),
                .uuid(userID))) > 0
    }

    func lock(userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE users SET status = 'locked', updated_at = ? WHERE id = ? AND status = 'active'", .date(now),
                .uuid(userID))) > 0
    }

    func storedFactors(userID: UUID) async throws -> StoredFactors {
        // One row per credential, and the count of unused backup codes (always there: fail
        // closed, a result that cannot be read must never look like "no second factor").
        let rows = try await database.rows(
            Statement(
                """
                SELECT 'backup' AS kind, NULL AS secret, NULL AS credential, NULL AS key_text, COUNT(*) AS n
                FROM backup_codes WHERE user_id = ? AND used_at IS NULL
                UNION ALL
                SELECT 'totp', id, NULL, NULL, 0 FROM totp_credentials WHERE user_id = ? AND status = 'active'
                UNION ALL
                SELECT 'passkey', NULL, credential_id, NULL, 0 FROM passkey_credentials WHERE user_id = ?
                UNION ALL
                SELECT method, NULL, device_id, public_key, 0 FROM devices WHERE user_id = ?
                  AND (method = 'smsOTP' OR (method = 'secureEnclave' AND public_key IS NOT NULL))
                """, .uuid(userID), .uuid(userID), .uuid(userID), .uuid(userID)),
            { row in
                StoredFactorRow(
                    kind: try row.text(0), secret: try row.optionalUUID(1), name: try row.optionalText(2),
                    key: try row.optionalText(3), count: try row.integer(4))
            })
        guard rows.contains(where: { $0.kind == "backup" }) else {
            throw StatementRowError(column: 0, reason: "no row for the stored factors")
        }
        var stored = StoredFactors()
        for row in rows {
            switch (row.kind, row.secret, row.name, row.key) {
            case ("backup", _, _, _): stored.unusedBackupCodes = row.count
            case ("totp", let secret?, _, _): stored.totp = secret
            case ("passkey", _, let credential?, _): stored.passkeys.insert(credential)
            case ("smsOTP", _, let device?, _): stored.smsDevices.insert(device)
            case ("secureEnclave", _, let device?, let key?): stored.deviceKeys[device] = key
            default: throw StatementRowError(column: 0, reason: "an unknown stored factor")
            }
        }
        return stored
    }

    func hasAdministrator() async throws -> Bool {
        try await database.count(Statement("SELECT id FROM users WHERE role = 'admin' LIMIT 1")) > 0
    }

    func setPasswordHash(_ hash: String, userID: UUID, now: Date, replacing: String, addedBy: AddingSession?)
        async throws -> Bool
    {
        let update = Statement(
            "UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? AND password_hash = ?", .text(hash),
            .date(now), .uuid(userID), .text(replacing))
        return try await database.changes(update, whileLive: addedBy) > 0
    }

    func setVerifiedPhone(_ phone: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws {
        let update = Statement(
            "UPDATE users SET phone = ?, phone_verified_at = ?, updated_at = ? WHERE id = ?", .text(phone),
            .date(now), .date(now), .uuid(userID))
        _ = try await database.changes(update, whileLive: addedBy)
    }

    func unverifyPhone(userID: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE users SET phone_verified_at = NULL, updated_at = ? WHERE id = ?", .date(now), .uuid(userID)))
    }

    func setEmail(_ email: String, userID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool {
        // The condition answers the usual case; the unique index, a change racing this one.
        let update = Statement(
            """
            UPDATE users SET email = ?, email_verified_at = ?, updated_at = ?
            WHERE id = ? AND NOT EXISTS (SELECT 1 FROM users AS other WHERE other.email = ? AND other.id <> ?)
            """, .text(email), .date(now), .date(now), .uuid(userID), .text(email), .uuid(userID))
        do {
            return try await database.changes(update, whileLive: addedBy) > 0
        } catch let error as any DatabaseError where error.isConstraintFailure {
            return false
        }
    }

    func verifyEmail(_ email: String, userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE users SET email_verified_at = COALESCE(email_verified_at, ?), updated_at = ?
                WHERE id = ? AND email = ?
                """, .date(now), .date(now), .uuid(userID), .text(email))) > 0
    }

    func emailInUse(_ email: String, except userID: UUID) async throws -> Bool {
        try await database.count(
            Statement("SELECT id FROM users WHERE email = ? AND id <> ?", .text(email), .uuid(userID))) > 0
    }

    func enableCodes(_ channel: DeliveryChannel, phone: String?, userID: UUID, now: Date, addedBy: AddingSession?)
        async throws
    {
        let update =
            switch channel {
            case .sms:
                Statement(
                    """
                    UPDATE users SET sms_enabled = true, phone = ?, phone_verified_at = ?, updated_at = ?
                    WHERE id = ?
                    """, .text(phone), .date(now), .date(now), .uuid(userID))
            case .email:
                Statement(
                    """
                    UPDATE users SET email_enabled = true, email_verified_at = COALESCE(email_verified_at, ?),
                      updated_at = ?
                    WHERE id = ?
                    """, .date(now), .date(now), .uuid(userID))
            }
        _ = try await database.changes(update, whileLive: addedBy)
    }

    func disableCodes(_ channel: DeliveryChannel, userID: UUID, now: Date) async throws -> Bool {
        let flag = channel == .sms ? "sms_enabled" : "email_enabled"
        return try await database.changes(
            Statement(
                """
                UPDATE users SET \(flag) = false, updated_at = ?,
                  primary_method = CASE WHEN primary_method = ? THEN NULL ELSE primary_method END
                WHERE id = ? AND \(flag) = true
                """, .date(now), .text(channel.rawValue), .uuid(userID))) > 0
    }

    func setPrimaryMethod(_ method: FactorMethod?, userID: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE users SET primary_method = ?, updated_at = ? WHERE id = ?", .text(method?.rawValue), .date(now),
                .uuid(userID)))
    }
}

extension UserStore {
    /// The account a typed name (a username or an email address) names, spaces trimmed; `nil`
    /// for none, or for a name too long to be one.
    func named(_ typed: String) async throws -> User? {
        let name = typed.trimmingCharacters(in: .whitespaces).lowercased()
        guard !name.isEmpty, name.count <= 254 else { return nil }
        return try await user(identifier: name)
    }
}
