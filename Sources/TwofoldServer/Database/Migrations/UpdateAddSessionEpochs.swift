import Fluent
import SQLKit

/// Session epochs (`SessionEpoch`): the account counts the times every one of its sessions was
/// ended, and each session, remembered device and login flow carries the count its sign-in read
/// before checking anything. Rows made before this migration start at 0, as their accounts do.
/// `users.reset_claim` and `reset_claimed_until` are the claim of the one factor reset an account
/// runs at a time (indexed by its end, for `Housekeeping`'s search for abandoned ones).
struct UpdateAddSessionEpochs: AsyncMigration {
    static let tables = ["users", "sessions", "trusted_devices", "login_flows"]

    func prepare(on database: any Database) async throws {
        for table in Self.tables {
            try await database.schema(table).field("session_epoch", .int64, .required, .sql(.default(0))).update()
        }
        // One column to a statement: SQLite adds one at a time.
        try await database.schema("users").field("reset_claim", .string).update()
        try await database.schema("users").field("reset_claimed_until", .datetime).update()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "users_by_reset_claim_end").on("users").column("reset_claimed_until").run()
        }
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase { try await sql.drop(index: "users_by_reset_claim_end").run() }
        try await database.schema("users").deleteField("reset_claimed_until").update()
        try await database.schema("users").deleteField("reset_claim").update()
        for table in Self.tables.reversed() {
            try await database.schema(table).deleteField("session_epoch").update()
        }
    }
}
