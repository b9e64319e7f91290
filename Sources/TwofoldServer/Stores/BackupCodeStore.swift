import Foundation
import TwofoldSQLite

/// One backup code (`backup_codes`), stored as a keyed lookup value (HMAC, to find the row
/// without trying every hash) and a salted slow hash (bcrypt) — ASVS v5 6.5.2 for secrets under
/// 112 bits.
struct BackupCodeRecord: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    var lookup: String
    var codeHash: String
    var createdAt: Date
    var usedAt: Date?
}

/// Backup codes. Using one is a single conditional update.
protocol BackupCodeStore: Sendable {
    /// Makes `codes` the user's set: the new ones are written first and then every other code of
    /// the user is deleted, so a crash between the two leaves the user with codes, never none.
    /// With `addedBy`, each write happens only while that session is live (`AddingSession`;
    /// throws its `ended` when it is not), so a revoked session neither leaves codes of its own
    /// after a reset nor wipes the owner's.
    func replace(userID: UUID, with codes: [BackupCodeRecord], addedBy: AddingSession?) async throws
    /// The code of `userID` with `lookup`, used or not (a code used a moment ago is told apart
    /// from a wrong one).
    func code(userID: UUID, lookup: String) async throws -> BackupCodeRecord?
    /// Marks the code used at `now` if it is not; whether this call did.
    func use(id: UUID, now: Date) async throws -> Bool
    /// How many of the user's codes are unused, how many there are, and when the newest was made.
    func summary(userID: UUID) async throws -> BackupCodeSummary
    func deleteAll(userID: UUID) async throws
}

/// What `BackupCodeStore.summary` read.
struct BackupCodeSummary: Sendable, Equatable {
    var unused: Int
    var total: Int
    var generatedAt: Date?
}

/// `BackupCodeStore` on the server's database.
struct SQLBackupCodeStore: BackupCodeStore {
    let database: any SQLExecutor

    func replace(userID: UUID, with codes: [BackupCodeRecord], addedBy: AddingSession?) async throws {
        guard !codes.isEmpty else { return try await deleteAll(userID: userID) }
        let columns = "id, user_id, lookup, code_hash, created_at"
        let rows: [[Statement.Value]] = codes.map {
            [.uuid($0.id), .uuid($0.userID), .text($0.lookup), .text($0.codeHash), .date($0.createdAt)]
        }
        if addedBy != nil {
            // One conditional statement a code (ten a set): each written only while the session lives.
            for row in rows {
                let insert = Statement("INSERT INTO backup_codes (\(columns)) VALUES (?, ?, ?, ?, ?)", row)
                _ = try await database.changes(inserting: insert, whileLive: addedBy)
            }
        } else {
            try await database.insert(into: "backup_codes", columns: columns, rows: rows)
        }
        let kept = Array(repeating: "?", count: codes.count).joined(separator: ", ")
        let delete = Statement(
            "DELETE FROM backup_codes WHERE user_id = ? AND id NOT IN (\(kept))",
            [.uuid(userID)] + codes.map { .uuid($0.id) })
        // No old codes to delete is no refusal: the first set replaces nothing.
        try await database.run(addedBy?.update(delete, on: database) ?? delete)
    }

    func code(userID: UUID, lookup: String) async throws -> BackupCodeRecord? {
        try await database.rows(
            Statement(
                """
                SELECT id, user_id, lookup, code_hash, created_at, used_at FROM backup_codes
                WHERE user_id = ? AND lookup = ?
                """, .uuid(userID), .text(lookup)),
            {
                BackupCodeRecord(
                    id: try $0.uuid(0), userID: try $0.uuid(1), lookup: try $0.text(2), codeHash: try $0.text(3),
                    createdAt: try $0.date(4), usedAt: try $0.optionalDate(5))
            }
        ).first
    }

    func use(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement("UPDATE backup_codes SET used_at = ? WHERE id = ? AND used_at IS NULL", .date(now), .uuid(id)))
            > 0
    }

    func summary(userID: UUID) async throws -> BackupCodeSummary {
        try await database.rows(
            Statement(
                """
                SELECT
                  (SELECT COUNT(*) FROM backup_codes WHERE user_id = ? AND used_at IS NULL) AS unused,
                  (SELECT COUNT(*) FROM backup_codes WHERE user_id = ?) AS total,
                  (SELECT MAX(created_at) FROM backup_codes WHERE user_id = ?) AS generated_at
                """, .uuid(userID), .uuid(userID), .uuid(userID)),
            {
                BackupCodeSummary(
                    unused: try $0.integer(0), total: try $0.integer(1), generatedAt: try $0.optionalDate(2))
            }
        ).first ?? BackupCodeSummary(unused: 0, total: 0)
    }

    func deleteAll(userID: UUID) async throws {
        try await database.run(Statement("DELETE FROM backup_codes WHERE user_id = ?", .uuid(userID)))
    }
}
