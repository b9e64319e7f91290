import Fluent
import SQLKit

/// When the address on file was proven, by a link or a code sent to it. Only a verified address
/// receives a password-reset link or a recovery code, and security notices. Addresses that
/// already carry email codes were proven when those were enabled, so they start verified.
struct UpdateUsersAddEmailVerifiedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users").field("email_verified_at", .datetime).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw("UPDATE users SET email_verified_at = updated_at WHERE email_enabled = \(bind: true)").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("users").deleteField("email_verified_at").update()
    }
}
