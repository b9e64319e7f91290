import Fluent

/// What each session proved and when (issue T): the sign-in policy decides from it, one proof
/// at a time, rather than from one `auth_time` shared by every method the session ever used.
struct UpdateSessionsAddProofs: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("sessions").field("proofs", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sessions").deleteField("proofs").update()
    }
}
