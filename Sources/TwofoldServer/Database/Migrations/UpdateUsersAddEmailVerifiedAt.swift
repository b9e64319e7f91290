import Fluent
import SQLKit

/// When the address on file was proven, by a link or a code sent to it. Only a verified address
/// receives a password-reset link or a recovery code, and security notices. Accounts made before
/// this migration keep what they had: their addresses already received notices and recovery
/// codes, and silently losing those at an upgrade would hide attacks from their owners. New
/// accounts confirm theirs.
struct UpdateUsersAddEmailVerifiedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users").field("email_verified_at", .datetime).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw("UPDATE users SET email_verified_at = created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("users").deleteField("email_verified_at").update()
    }
}
