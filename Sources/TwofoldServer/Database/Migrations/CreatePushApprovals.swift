import Fluent
import SQLKit

/// "Approve on your phone" requests (`PushApprovalStore`, issue Z): one row per request, kept an
/// hour past its end so the budget and the run of denials can be counted from it.
struct CreatePushApprovals: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("push_approvals")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            // The login flow the request completes.
            .field("flow_id", .uuid, .required)
            // The number on the signing-in screen, and the three the phone offers.
            .field("number", .int, .required)
            .field("choices", .string, .required)
            .field("asking", .string, .required)
            .field("place", .string, .required)
            .field("digest", .string, .required)
            .field("status", .string, .required)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("decided_at", .datetime)
            // The device whose key signed the decision, and that key: a sign-in completes only
            // while the device still has it (a re-keyed device's approval proves nothing).
            .field("device_id", .string)
            .field("signed_key", .string)
            .field("ip_address", .string)
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        // At most one open request per account (issue Z item 3), whatever races: a second
        // waiting request of one account cannot be written.
        try await sql.raw(
            "CREATE UNIQUE INDEX push_approvals_one_open ON push_approvals (user_id) WHERE status = 'pending'"
        ).run()
        try await sql.create(index: "push_approvals_user_created").on("push_approvals").column("user_id")
            .column("created_at").run()
        try await sql.create(index: "push_approvals_decided").on("push_approvals").column("decided_at").run()
        // What changed lately, for the waiters of other instances (`changed(since:)`).
        try await sql.create(index: "push_approvals_created").on("push_approvals").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("push_approvals").delete()
    }
}
