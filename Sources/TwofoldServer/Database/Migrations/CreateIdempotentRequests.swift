import Fluent

/// The answers of requests sent with an `Idempotency-Key` (`IdempotencyStore`), kept 24 hours.
struct CreateIdempotentRequests: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("idempotent_requests")
            .id()
            .field("key_hash", .string, .required)
            .field("request_hash", .string, .required)
            .field("status", .int)
            .field("content_type", .string)
            .field("body_ciphertext", .string)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .unique(on: "key_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("idempotent_requests").delete()
    }
}

/// The housekeeping sweep deletes expired idempotent requests by this index.
struct CreateIdempotentRequestsExpiryIndex: IndexMigration {
    static let indexes: [IndexMigrationEntry] = [
        ("idempotent_requests_expires_at", "idempotent_requests", ["expires_at"])
    ]
}
