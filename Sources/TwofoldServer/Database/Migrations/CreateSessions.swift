import Fluent

struct CreateSessions: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("sessions")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("auth_time", .datetime, .required)
            .field("amr", .string, .required)
            .field("created_at", .datetime, .required)
            .field("last_used_at", .datetime, .required)
            .field("revoked_at", .datetime)
            .field("revoke_reason", .string)
            .field("ip_address", .string)
            .field("user_agent", .string)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sessions").delete()
    }
}
