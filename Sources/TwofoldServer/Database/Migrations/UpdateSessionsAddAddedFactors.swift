import Fluent

/// The factors a session added (issue S item 1): a factor added in a session does not satisfy
/// that session's step-up, or a stolen session could add its own factor and step up with it.
struct UpdateSessionsAddAddedFactors: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("sessions").field("added_factors", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sessions").deleteField("added_factors").update()
    }
}
