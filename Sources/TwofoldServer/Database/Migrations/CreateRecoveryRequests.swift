import Fluent

/// Account-recovery requests (`RecoveryStore`): one row per request, and its document apart, so
/// that listing requests never reads a file and closing one deletes it whole.
struct CreateRecoveryRequests: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("recovery_requests")
            .id()
            // `NULL` for an address no account has: the request is kept and answered alike.
            .field("user_id", .uuid, .references("users", .id, onDelete: .cascade))
            .field("email", .string, .required)
            .field("message_ciphertext", .string, .required)
            .field("state", .string, .required)
            .field("code_hash", .string, .required)
            .field("code_failures", .int, .required)
            .field("cancel_token_hash", .string, .required)
            .field("pass_hash", .string)
            .field("usable_from", .datetime)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("email_verified_at", .datetime)
            .field("decided_at", .datetime)
            .field("decided_by", .uuid)
            .field("note", .string)
            .field("closed_at", .datetime)
            // "This wasn't me" after the pass was used.
            .field("disowned_at", .datetime)
            // An administrator unlocked or reset the account since: the hold no longer applies.
            .field("released_at", .datetime)
            .field("ip_address", .string)
            .field("user_agent", .string)
            .unique(on: "cancel_token_hash")
            .unique(on: "pass_hash")
            .create()
        try await database.schema("recovery_documents")
            .field(
                "request_id", .uuid, .identifier(auto: false), .references("recovery_requests", .id, onDelete: .cascade)
            )
            .field("content_type", .string, .required)
            .field("bytes", .int, .required)
            .field("ciphertext", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("recovery_documents").delete()
        try await database.schema("recovery_requests").delete()
    }
}

/// The admin's queue reads requests by state, newest first.
struct CreateRecoveryRequestsIndexes: IndexMigration {
    static let indexes: [IndexMigrationEntry] = [
        ("recovery_requests_state_created", "recovery_requests", ["state", "created_at"]),
        ("recovery_requests_user", "recovery_requests", ["user_id"]),
    ]
}
