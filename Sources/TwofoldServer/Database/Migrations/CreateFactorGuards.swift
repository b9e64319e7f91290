import Fluent
import SQLKit

/// Wrong-code counters per user and factor, and the log of failures that the 24-hour account
/// rule counts.
struct CreateFactorGuards: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("factor_guards")
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("factor", .string, .required)
            .field("attempts", .int, .required)
            .field("locked_until", .datetime)
            .field("lockouts", .int, .required)
            .compositeIdentifier(over: "user_id", "factor")
            .create()
        try await database.schema("factor_failures")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("factor", .string, .required)
            .field("occurred_at", .datetime, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("factor_failures").delete()
        try await database.schema("factor_guards").delete()
    }
}
