import Fluent
import SQLKit

/// Whether SMS and email codes are enabled for a user, and which factor login offers first.
struct UpdateUsersAddCodeFactors: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(User.schema)
            .field("sms_enabled", .bool, .required, .sql(.default(false)))
            .update()
        try await database.schema(User.schema)
            .field("email_enabled", .bool, .required, .sql(.default(false)))
            .update()
        try await database.schema(User.schema)
            .field("primary_method", .string)
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("primary_method").update()
        try await database.schema(User.schema).deleteField("email_enabled").update()
        try await database.schema(User.schema).deleteField("sms_enabled").update()
    }
}
