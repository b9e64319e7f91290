import Fluent
import Foundation

/// A message waiting to be delivered (an SMS or email carrying a code). Written in the same
/// transaction as the code it carries, so a code is never issued without its message; delivered
/// by `DeliveryWorker` with retries. Destination and text are stored encrypted (they hold the
/// code and the full phone number), and the text is wiped once delivered.
final class OutboxMessage: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "outbox_messages"

    enum Channel: String, Codable, Sendable { case sms, email }
    enum Status: String, Codable, Sendable { case pending, sending, sent, failed }

    @ID(key: .id) var id: UUID?
    @Field(key: "channel") var channel: Channel
    @Field(key: "destination_ciphertext") var destinationCiphertext: String
    @Field(key: "subject") var subject: String
    @Field(key: "body_ciphertext") var bodyCiphertext: String
    @Field(key: "status") var status: Status
    @Field(key: "attempts") var attempts: Int
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    @Field(key: "created_at") var createdAt: Date
    @OptionalField(key: "sent_at") var sentAt: Date?
    @OptionalField(key: "last_error") var lastError: String?

    init() {}

    init(
        id: UUID, channel: Channel, destinationCiphertext: String, subject: String, bodyCiphertext: String, now: Date
    ) {
        self.id = id
        self.channel = channel
        self.destinationCiphertext = destinationCiphertext
        self.subject = subject
        self.bodyCiphertext = bodyCiphertext
        self.status = .pending
        self.attempts = 0
        self.nextAttemptAt = now
        self.createdAt = now
    }
}
