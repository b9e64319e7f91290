import Fluent
import Foundation
import SQLKit

/// A user's authenticator-app secret: pending after setup (10 minutes to confirm), active once a
/// code confirmed it. The secret is stored only encrypted (AES-GCM, key outside the database).
final class TOTPCredential: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "totp_credentials"

    enum Status: String, Codable, Sendable { case pending, active }

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    @Field(key: "status") var status: Status
    /// base64 of AES-GCM `nonce ‖ ciphertext ‖ tag`, bound to the user id as associated data.
    @Field(key: "secret_ciphertext") var secretCiphertext: String
    @Field(key: "algorithm") var algorithm: String
    @Field(key: "digits") var digits: Int
    @Field(key: "period") var period: Int
    @Field(key: "created_at") var createdAt: Date
    /// When a pending secret is discarded.
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "confirmed_at") var confirmedAt: Date?
    /// The last time step accepted; a step is never accepted twice (RFC 6238 §5.2).
    @OptionalField(key: "last_used_step") var lastUsedStep: Int64?

    init() {}

    /// A stored secret from a row of all its columns.
    init(row: any SQLRow) throws {
        self.id = try row.decode(column: "id", as: UUID.self)
        self.$id.exists = true
        self.userID = try row.decode(column: "user_id", as: UUID.self)
        self.status = try row.decode(column: "status", as: Status.self)
        self.secretCiphertext = try row.decode(column: "secret_ciphertext", as: String.self)
        self.algorithm = try row.decode(column: "algorithm", as: String.self)
        self.digits = try row.decode(column: "digits", as: Int.self)
        self.period = try row.decode(column: "period", as: Int.self)
        self.createdAt = try row.decode(column: "created_at", as: Date.self)
        self.expiresAt = try row.decode(column: "expires_at", as: Date.self)
        self.confirmedAt = try row.decode(column: "confirmed_at", as: Date?.self)
        self.lastUsedStep = try row.decode(column: "last_used_step", as: Int64?.self)
    }

    init(userID: UUID, secretCiphertext: String, now: Date, expiresAt: Date) {
        self.userID = userID
        self.status = .pending
        self.secretCiphertext = secretCiphertext
        self.algorithm = "SHA1"
        self.digits = 6
        self.period = 30
        self.createdAt = now
        self.expiresAt = expiresAt
    }
}
