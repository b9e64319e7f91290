import Fluent

struct CreateAuditEvents: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // No foreign keys: the audit trail outlives the users it mentions.
        try await database.schema("audit_events")
            .id()
            .field("occurred_at", .datetime, .required)
            .field("type", .string, .required)
            .field("user_id", .uuid)
            .field("actor_id", .uuid)
            .field("ip_address", .string)
            .field("user_agent", .string)
            .field("detail", .string, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("audit_events").delete()
    }
}
