import Fluent

/// Single-use links sent by email (`EmailLinkStore`): a forgotten password's reset, and the
/// verification of the account's address. The token is stored only as a hash.
struct CreateEmailLinks: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("email_links")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("purpose", .string, .required)
            // The address the link went to: a verification proves that address, not a later one.
            .field("email", .string, .required)
            .field("token_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .field("ip_address", .string)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("email_links").delete()
    }
}

/// A new link replaces the user's earlier ones of its purpose; housekeeping deletes by expiry.
struct CreateEmailLinksIndexes: IndexMigration {
    static let indexes: [IndexMigrationEntry] = [
        ("email_links_user_purpose", "email_links", ["user_id", "purpose"]),
        ("email_links_expires", "email_links", ["expires_at"]),
    ]
}
