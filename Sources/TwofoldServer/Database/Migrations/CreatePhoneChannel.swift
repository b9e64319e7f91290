import Fluent
import SQLKit

/// What reaches a phone besides its own requests (`PhoneChannelStore`, issue Z): where Apple's
/// push service reaches it (`push_tokens`, one per device, a token on one device only), and the
/// notices for the account's phones (`phone_notices`, kept a week).
struct CreatePhoneChannel: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("push_tokens")
            .field("device_row_id", .uuid, .identifier(auto: false), .references("devices", .id, onDelete: .cascade))
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("token", .string, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "token")
            .create()
        try await database.schema("phone_notices")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("title", .string, .required)
            .field("body", .string, .required)
            .field("created_at", .datetime, .required)
            // The sign-in it tells of: one notice per sign-in, whichever instance saw it first.
            .field("session_id", .uuid)
            .unique(on: "session_id")
            .create()
        // The sign-ins the watch has looked at (`PhoneChannel.watchSignIns`), kept a day: what
        // it has not looked at yet is found again after a restart, on any instance.
        try await database.schema("sign_in_checks")
            .field("session_id", .uuid, .identifier(auto: false))
            .field("checked_at", .datetime, .required)
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "sign_in_checks_checked").on("sign_in_checks").column("checked_at").run()
        try await sql.create(index: "push_tokens_user").on("push_tokens").column("user_id").run()
        try await sql.create(index: "phone_notices_user_created").on("phone_notices").column("user_id")
            .column("created_at").run()
        // The sign-ins of the last moments, which `PhoneChannel.watchSignIns` reads.
        try await sql.create(index: "sessions_created").on("sessions").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase { try await sql.drop(index: "sessions_created").run() }
        try await database.schema("sign_in_checks").delete()
        try await database.schema("phone_notices").delete()
        try await database.schema("push_tokens").delete()
    }
}
