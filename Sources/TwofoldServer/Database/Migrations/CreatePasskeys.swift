import Fluent
import SQLKit

/// Passkeys (`passkey_credentials`) and the challenges of their ceremonies
/// (`webauthn_challenges`), found by the challenge the client data carries.
struct CreatePasskeys: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("passkey_credentials")
            .id()
            .field("user_id", .uuid, .required, .references("users", .id, onDelete: .cascade))
            .field("credential_id", .string, .required)
            .field("name", .string, .required)
            .field("public_key", .string, .required)
            .field("algorithm", .int, .required)
            .field("sign_count", .int, .required)
            .field("aaguid", .string, .required)
            .field("backup_eligible", .bool, .required)
            .field("backed_up", .bool, .required)
            .field("transports", .string, .required)
            .field("attestation_format", .string, .required)
            .field("attestation_trust", .string, .required)
            .field("created_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .unique(on: "credential_id")
            .create()
        try await database.schema("webauthn_challenges")
            .id()
            .field("challenge", .string, .required)
            .field("purpose", .string, .required)
            .field("user_id", .uuid, .references("users", .id, onDelete: .cascade))
            .field("flow_id", .uuid)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "challenge")
            .create()
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.create(index: "passkey_credentials_by_user").on("passkey_credentials").column("user_id").run()
        try await sql.create(index: "webauthn_challenges_by_expiry").on("webauthn_challenges").column("expires_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("webauthn_challenges").delete()
        try await database.schema("passkey_credentials").delete()
    }
}
