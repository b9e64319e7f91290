import Fluent
import Foundation

/// A 6-digit code sent by SMS or email (seeds 002, 003): valid 5 minutes, used once, at most 5
/// wrong tries, stored only as a keyed hash. `purpose` says what it proves: a login flow's second
/// step, a new destination being enabled, a step-up, or a new phone/email replacing the old.
final class OneTimeCode: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "one_time_codes"

    enum Purpose: String, Codable, Sendable {
        case login, enable
        case stepUp = "step_up"
        case changeDestination = "change_destination"
        /// Seed 004: an SMS code that signs a device user in (`POST /auth/request-otp`).
        case deviceSignIn = "device_sign_in"
    }

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    @Field(key: "channel") var channel: OutboxMessage.Channel
    @Field(key: "purpose") var purpose: Purpose
    @OptionalField(key: "flow_id") var flowID: UUID?
    /// The phone number or address the code went to, encrypted (it becomes the one on file when
    /// an `enable` code is confirmed).
    @Field(key: "destination_ciphertext") var destinationCiphertext: String
    @Field(key: "code_hash") var codeHash: String
    @Field(key: "failures") var failures: Int
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "used_at") var usedAt: Date?

    init() {}

    init(
        id: UUID, userID: UUID, channel: OutboxMessage.Channel, purpose: Purpose, flowID: UUID?,
        destinationCiphertext: String, codeHash: String, now: Date, expiresAt: Date
    ) {
        self.id = id
        self.userID = userID
        self.channel = channel
        self.purpose = purpose
        self.flowID = flowID
        self.destinationCiphertext = destinationCiphertext
        self.codeHash = codeHash
        self.failures = 0
        self.createdAt = now
        self.expiresAt = expiresAt
    }
}
