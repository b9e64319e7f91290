import Fluent

struct CreateOneTimeCodes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("one_time_codes")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("channel", .string, .required)
            .field("purpose", .string, .required)
            .field("flow_id", .uuid)
            .field("destination_ciphertext", .string, .required)
            .field("code_hash", .string, .required)
            .field("failures", .int, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("one_time_codes").delete()
    }
}
