import Foundation
import TwofoldSQLite

/// A remembered device (`trusted_devices`): its token is kept only as a hash.
struct TrustedDeviceRecord: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    var tokenHash: String
    var name: String
    var createdAt: Date
    var expiresAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?
    /// The account's `SessionEpoch` its sign-in read: the device is remembered only while the
    /// account's is not past it.
    var epoch: Int = 0
}

/// The remembered devices' table. Every change that must happen once is one conditional
/// statement, so it holds under concurrency and across server instances.
protocol TrustedDeviceStore: Sendable {
    func insert(_ device: TrustedDeviceRecord) async throws
    /// Marks the live device of `userID` holding `tokenHash` (unrevoked, unexpired and not behind
    /// the account's `SessionEpoch`) used at `now`; whether there was one.
    func markUsed(tokenHash: String, userID: UUID, now: Date) async throws -> Bool
    /// The user's devices that are neither revoked, expired at `now`, nor behind the account's
    /// `SessionEpoch`, newest first.
    func live(userID: UUID, now: Date) async throws -> [TrustedDeviceRecord]
    /// Revokes device `id` of `userID` if it is not revoked yet; its name when this call did.
    func revoke(id: UUID, userID: UUID, now: Date) async throws -> String?
    /// Revokes every unrevoked device of `userID`; how many.
    func revokeAll(userID: UUID, now: Date) async throws -> Int
}

/// `TrustedDeviceStore` on the server's database.
struct SQLTrustedDeviceStore: TrustedDeviceStore {
    let database: any SQLExecutor

    private static let columns =
        "id, user_id, token_hash, name, created_at, expires_at, last_used_at, revoked_at, session_epoch"

    private static func record(_ row: StatementRow) throws -> TrustedDeviceRecord {
        TrustedDeviceRecord(
            id: try row.uuid(0), userID: try row.uuid(1), tokenHash: try row.text(2), name: try row.text(3),
            createdAt: try row.date(4), expiresAt: try row.date(5), lastUsedAt: try row.optionalDate(6),
            revokedAt: try row.optionalDate(7), epoch: try row.integer(8))
    }

    func insert(_ device: TrustedDeviceRecord) async throws {
        try await database.run(
            Statement(
                "INSERT INTO trusted_devices (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                .uuid(device.id), .uuid(device.userID), .text(device.tokenHash), .text(device.name),
                .date(device.createdAt), .date(device.expiresAt), .date(device.lastUsedAt), .date(device.revokedAt),
                .integer(device.epoch)))
    }

    func markUsed(tokenHash: String, userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE trusted_devices SET last_used_at = ?
                WHERE token_hash = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?
                  AND \(SessionEpoch.current("trusted_devices"))
                """, .date(now), .text(tokenHash), .uuid(userID), .date(now))) > 0
    }

    func live(userID: UUID, now: Date) async throws -> [TrustedDeviceRecord] {
        try await database.rows(
            Statement(
                """
                SELECT \(Self.columns) FROM trusted_devices
                WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?
                  AND \(SessionEpoch.current("trusted_devices")) ORDER BY created_at DESC
                """, .uuid(userID), .date(now)), Self.record)
    }

    func revoke(id: UUID, userID: UUID, now: Date) async throws -> String? {
        let revoked = try await database.changes(
            Statement(
                "UPDATE trusted_devices SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                .date(now), .uuid(id), .uuid(userID)))
        guard revoked > 0 else { return nil }
        return try await database.rows(
            Statement("SELECT name FROM trusted_devices WHERE id = ?", .uuid(id)), { try $0.text(0) }
        ).first
    }

    func revokeAll(userID: UUID, now: Date) async throws -> Int {
        try await database.changes(
            Statement(
                "UPDATE trusted_devices SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", .date(now),
                .uuid(userID)))
    }
}
