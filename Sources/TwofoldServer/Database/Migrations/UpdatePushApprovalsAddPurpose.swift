import Fluent
import SQLKit

/// What an approval request completes: a login flow's second step (`sign_in`, every request
/// before this) or a signed-in session's step-up (`step_up`, whose `flow_id` is the session).
struct UpdatePushApprovalsAddPurpose: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("push_approvals")
            .field("purpose", .string, .required, .sql(.default("sign_in")))
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("push_approvals").deleteField("purpose").update()
    }
}
