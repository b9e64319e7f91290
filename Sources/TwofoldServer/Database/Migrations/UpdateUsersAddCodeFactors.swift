import Fluent
import SQLKit

/// Whether SMS and email codes are enabled for a user, and which factor login offers first.
struct UpdateUsersAddCodeFactors: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users")
            .field("sms_enabled", .bool, .required, .sql(.default(false)))
            .update()
        try await database.schema("users")
            .field("email_enabled", .bool, .required, .sql(.default(false)))
            .update()
        try await database.schema("users")
            .field("primary_method", .string)
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("users").deleteField("primary_method").update()
        try await database.schema("users").deleteField("email_enabled").update()
        try await database.schema("users").deleteField("sms_enabled").update()
    }
}
