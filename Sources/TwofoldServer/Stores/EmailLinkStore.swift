import Foundation
import TwofoldSQLite

/// A single-use link sent by email (`email_links`): a forgotten password's reset, or the
/// verification of an address. The token the link carries is stored only as a hash.
struct EmailLinkRecord: Sendable, Equatable {
    enum Purpose: String, Sendable {
        case passwordReset = "password_reset"
        case verifyEmail = "verify_email"
    }

    var id: UUID
    var userID: UUID
    var purpose: Purpose
    /// The address the link went to (stored canonical, as the account's is).
    var email: String
    var tokenHash: String
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
    var ipAddress: String?
}

/// Email links. Using one is a single conditional update, so of any number of parallel uses of
/// one link exactly one wins.
protocol EmailLinkStore: Sendable {
    /// Stores `link` after ending the user's unused links of its purpose: the newest link is the
    /// only one that works.
    func insert(_ link: EmailLinkRecord) async throws
    func link(tokenHash: String) async throws -> EmailLinkRecord?
    /// Marks the link used at `now` if it is unused and unexpired; whether this call did.
    func claim(id: UUID, now: Date) async throws -> Bool
    /// Gives back the claim `claim` made at `claimedAt` (and only that one), unless a newer link
    /// of its purpose was made meanwhile (which ended this one).
    func release(id: UUID, claimedAt: Date) async throws
    /// Ends every unused link of `purpose` of the user (a new password ends the reset links).
    func endAll(userID: UUID, purpose: EmailLinkRecord.Purpose, now: Date) async throws
    /// Deletes links that expired by `before` (housekeeping).
    func deleteExpired(before: Date) async throws
}

/// `EmailLinkStore` on the server's database.
struct SQLEmailLinkStore: EmailLinkStore {
    let database: any SQLExecutor

    private static let columns = "id, user_id, purpose, email, token_hash, created_at, expires_at, used_at, ip_address"

    func insert(_ link: EmailLinkRecord) async throws {
        try await endAll(userID: link.userID, purpose: link.purpose, now: link.createdAt)
        try await database.insert(
            into: "email_links", columns: Self.columns,
            rows: [
                [
                    .uuid(link.id), .uuid(link.userID), .text(link.purpose.rawValue), .text(link.email),
                    .text(link.tokenHash), .date(link.createdAt), .date(link.expiresAt), .date(link.usedAt),
                    .text(link.ipAddress),
                ]
            ])
    }

    func link(tokenHash: String) async throws -> EmailLinkRecord? {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM email_links WHERE token_hash = ?", .text(tokenHash)),
            { row in
                guard let purpose = EmailLinkRecord.Purpose(rawValue: try row.text(2)) else {
                    throw StatementRowError(column: 2, reason: "is not an email link's purpose")
                }
                return EmailLinkRecord(
                    id: try row.uuid(0), userID: try row.uuid(1), purpose: purpose, email: try row.text(3),
                    tokenHash: try row.text(4), createdAt: try row.date(5), expiresAt: try row.date(6),
                    usedAt: try row.optionalDate(7), ipAddress: try row.optionalText(8))
            }
        ).first
    }

    func claim(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE email_links SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?", .date(now),
                .uuid(id), .date(now))) > 0
    }

    func release(id: UUID, claimedAt: Date) async throws {
        try await database.run(
            Statement(
                """
                UPDATE email_links SET used_at = NULL
                WHERE id = ? AND used_at = ?
                  AND NOT EXISTS (SELECT 1 FROM email_links AS newer WHERE newer.user_id = email_links.user_id
                    AND newer.purpose = email_links.purpose AND newer.created_at > email_links.created_at)
                """, .uuid(id), .date(claimedAt)))
    }

    func endAll(userID: UUID, purpose: EmailLinkRecord.Purpose, now: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE email_links SET used_at = ? WHERE user_id = ? AND purpose = ? AND used_at IS NULL", .date(now),
                .uuid(userID), .text(purpose.rawValue)))
    }

    func deleteExpired(before: Date) async throws {
        try await database.run(Statement("DELETE FROM email_links WHERE expires_at <= ?", .date(before)))
    }
}
