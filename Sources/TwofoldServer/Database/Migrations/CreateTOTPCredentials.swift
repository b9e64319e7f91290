import Fluent

struct CreateTOTPCredentials: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("totp_credentials")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("status", .string, .required)
            .field("secret_ciphertext", .string, .required)
            .field("algorithm", .string, .required)
            .field("digits", .int, .required)
            .field("period", .int, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("confirmed_at", .datetime)
            .field("last_used_step", .int64)
            .unique(on: "user_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("totp_credentials").delete()
    }
}
