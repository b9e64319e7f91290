import Fluent

/// Session epochs (`SessionEpoch`): the account counts the times every one of its sessions was
/// ended, and each session, remembered device and login flow carries the count its sign-in read
/// before checking anything. Rows made before this migration start at 0, as their accounts do.
/// `users.reset_claimed_until` is the claim of the one factor reset an account runs at a time.
struct UpdateAddSessionEpochs: AsyncMigration {
    static let tables = ["users", "sessions", "trusted_devices", "login_flows"]

    func prepare(on database: any Database) async throws {
        for table in Self.tables {
            try await database.schema(table).field("session_epoch", .int64, .required, .sql(.default(0))).update()
        }
        try await database.schema("users").field("reset_claimed_until", .datetime).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("users").deleteField("reset_claimed_until").update()
        for table in Self.tables.reversed() {
            try await database.schema(table).deleteField("session_epoch").update()
        }
    }
}
