import Fluent

struct CreateTrustedDevices: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("trusted_devices")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("name", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .field("revoked_at", .datetime)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("trusted_devices").delete()
    }
}
