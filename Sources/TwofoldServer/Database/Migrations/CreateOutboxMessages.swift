import Fluent

struct CreateOutboxMessages: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("outbox_messages")
            .id()
            .field("channel", .string, .required)
            .field("destination_ciphertext", .string, .required)
            .field("subject", .string, .required)
            .field("body_ciphertext", .string, .required)
            .field("status", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("created_at", .datetime, .required)
            .field("sent_at", .datetime)
            .field("last_error", .string)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("outbox_messages").delete()
    }
}
