import Fluent

struct CreateBackupCodes: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("backup_codes")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("lookup", .string, .required)
            .field("code_hash", .string, .required)
            .field("created_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "user_id", "lookup")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("backup_codes").delete()
    }
}
