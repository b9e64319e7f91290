import Fluent
import SQLKit

/// When the phone on file was proven by a code sent to it. Only a verified number receives
/// sign-in codes or enables SMS sign-in (issue S item 2); a number typed at registration is not.
/// Numbers that already carry SMS codes were proven when those were enabled, so they start
/// verified.
struct UpdateUsersAddPhoneVerifiedAt: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users").field("phone_verified_at", .datetime).update()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw(
            "UPDATE users SET phone_verified_at = updated_at WHERE sms_enabled = \(bind: true) AND phone IS NOT NULL"
        ).run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("users").deleteField("phone_verified_at").update()
    }
}
