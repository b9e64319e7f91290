import Fluent

struct CreateDevices: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("devices")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("device_id", .string, .required)
            .field("device_model", .string)
            .field("method", .string, .required)
            .field("public_key", .string)
            .field("enrolled_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .field("pin_hash", .string)
            .field("pin_failures", .int, .required)
            .field("pin_blocked", .bool, .required)
            .field("biometric_key", .string)
            .unique(on: "user_id", "device_id")
            .create()
        try await database.schema("device_challenges")
            .id()
            .field("device_id", .uuid, .required, .references("devices", .id, onDelete: .cascade))
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("purpose", .string, .required)
            .field("flow_id", .uuid)
            .field("challenge", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("device_challenges").delete()
        try await database.schema("devices").delete()
    }
}
