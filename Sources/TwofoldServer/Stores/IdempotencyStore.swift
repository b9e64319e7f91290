import Foundation
import TwofoldSQLite

/// A request sent with an `Idempotency-Key`: who sent which key (hashed), the request it came
/// with (hashed), and once answered, the answer (its body sealed: it may hold tokens).
struct IdempotentRequestRecord: Sendable, Equatable {
    var id: UUID
    var keyHash: String
    var requestHash: String
    /// `nil` while the first request with the key is still being answered.
    var status: Int?
    var contentType: String?
    var bodyCiphertext: String?
    var createdAt: Date
    var expiresAt: Date
}

/// The idempotent requests (`idempotent_requests`).
protocol IdempotencyStore: Sendable {
    /// Claims `record.keyHash` for a new request, after removing a claim of the key that expired
    /// or that is still unanswered since before `staleBefore` (its server stopped): `nil` when
    /// this call claimed it (one of any number of parallel calls), else the claim that holds it.
    func claim(_ record: IdempotentRequestRecord, now: Date, staleBefore: Date) async throws
        -> IdempotentRequestRecord?
    /// Stores the answer of the request claimed as `id`.
    func complete(id: UUID, status: Int, contentType: String, bodyCiphertext: String) async throws
    /// Gives the claim `id` up (its request failed on the server's side): the key may be used again.
    func release(id: UUID) async throws
    /// Deletes the claims that expired before `before` (housekeeping).
    func deleteExpired(before: Date) async throws
}

/// `IdempotencyStore` on the server's database.
struct SQLIdempotencyStore: IdempotencyStore {
    let database: any SQLExecutor

    func claim(_ record: IdempotentRequestRecord, now: Date, staleBefore: Date) async throws
        -> IdempotentRequestRecord?
    {
        try await database.run(
            Statement(
                """
                DELETE FROM idempotent_requests
                WHERE key_hash = ? AND (expires_at <= ? OR (status IS NULL AND created_at <= ?))
                """, .text(record.keyHash), .date(now), .date(staleBefore)))
        let claimed = try await database.changes(
            Statement(
                """
                INSERT INTO idempotent_requests (id, key_hash, request_hash, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING
                """, .uuid(record.id), .text(record.keyHash), .text(record.requestHash), .date(record.createdAt),
                .date(record.expiresAt)))
        guard claimed == 0 else { return nil }
        let held = try await database.rows(
            Statement(
                """
                SELECT id, key_hash, request_hash, status, content_type, body_ciphertext, created_at, expires_at
                FROM idempotent_requests WHERE key_hash = ?
                """, .text(record.keyHash))
        ) { row in
            IdempotentRequestRecord(
                id: try row.uuid(0), keyHash: try row.text(1), requestHash: try row.text(2),
                status: try row.optionalInteger(3), contentType: try row.optionalText(4),
                bodyCiphertext: try row.optionalText(5), createdAt: try row.date(6), expiresAt: try row.date(7))
        }
        // Released between the two statements: as busy as a claim still being answered.
        return held.first
            ?? IdempotentRequestRecord(
                id: record.id, keyHash: record.keyHash, requestHash: record.requestHash, status: nil, contentType: nil,
                bodyCiphertext: nil, createdAt: record.createdAt, expiresAt: record.expiresAt)
    }

    func complete(id: UUID, status: Int, contentType: String, bodyCiphertext: String) async throws {
        try await database.run(
            Statement(
                "UPDATE idempotent_requests SET status = ?, content_type = ?, body_ciphertext = ? WHERE id = ?",
                .integer(status), .text(contentType), .text(bodyCiphertext), .uuid(id)))
    }

    func release(id: UUID) async throws {
        try await database.run(
            Statement("DELETE FROM idempotent_requests WHERE id = ? AND status IS NULL", .uuid(id)))
    }

    func deleteExpired(before: Date) async throws {
        try await database.run(Statement("DELETE FROM idempotent_requests WHERE expires_at <= ?", .date(before)))
    }
}
