import Foundation

/// Users (`users`). Only what the stores' services need so far; the rest of the table is still
/// read and written through the `User` model while it moves here.
protocol UserStore: Sendable {
    /// Locks an active account; whether this call did.
    func lock(userID: UUID, now: Date) async throws -> Bool
    /// Whether the user exists and is not active (locked or disabled).
    func isInactive(userID: UUID) async throws -> Bool
    /// How many of each stored second factor the user has, in one read (every second step asks).
    func storedFactors(userID: UUID) async throws -> StoredFactors
}

/// The user's second factors kept in their own tables (SMS and email are flags on the user).
struct StoredFactors: Sendable, Equatable {
    var activeTOTP: Int
    var deviceKeys: Int
    var unusedBackupCodes: Int
}

/// `UserStore` on the server's database.
struct SQLUserStore: UserStore {
    let database: any SQLExecutor

    func lock(userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE users SET status = 'locked', updated_at = ? WHERE id = ? AND status = 'active'", .date(now),
                .uuid(userID))) > 0
    }

    func storedFactors(userID: UUID) async throws -> StoredFactors {
        // Fail closed: a row that cannot be read must never look like "no second factor".
        guard
            let counts = try await database.rows(
                Statement(
                    """
                    SELECT
                      (SELECT COUNT(*) FROM totp_credentials WHERE user_id = ? AND status = 'active') AS totp,
                      (SELECT COUNT(*) FROM devices WHERE user_id = ? AND method = 'secureEnclave'
                         AND public_key IS NOT NULL) AS device_keys,
                      (SELECT COUNT(*) FROM backup_codes WHERE user_id = ? AND used_at IS NULL) AS backup
                    """, .uuid(userID), .uuid(userID), .uuid(userID)),
                {
                    StoredFactors(
                        activeTOTP: try $0.integer(0), deviceKeys: try $0.integer(1),
                        unusedBackupCodes: try $0.integer(2))
                }
            ).first
        else { throw StatementRowError(column: 0, reason: "no row for the stored factors") }
        return counts
    }

    func isInactive(userID: UUID) async throws -> Bool {
        try await database.count(
            Statement("SELECT id FROM users WHERE id = ? AND status <> 'active'", .uuid(userID))) > 0
    }
}
