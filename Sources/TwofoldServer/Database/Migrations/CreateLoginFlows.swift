import Fluent

struct CreateLoginFlows: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("login_flows")
            .id()
            .field("token_hash", .string, .required)
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("first_factor", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("consumed_at", .datetime)
            .field("ip_address", .string)
            .unique(on: "token_hash")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("login_flows").delete()
    }
}
