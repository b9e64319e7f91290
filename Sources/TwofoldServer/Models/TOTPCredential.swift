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

    /// The columns `init(row:)` reads, in order.
    static let columns =
        "id, user_id, status, secret_ciphertext, algorithm, digits, period, created_at, expires_at, confirmed_at, last_used_step"

    /// A stored secret from the columns `columns` names.
    init(row: StatementRow) throws {
        self.id = try row.uuid(0)
        self.$id.exists = true
        self.userID = try row.uuid(1)
        guard let status = Status(rawValue: try row.text(2)) else {
            throw StatementRowError(column: 2, reason: "is not a TOTP credential status")
        }
        self.status = status
        self.secretCiphertext = try row.text(3)
        self.algorithm = try row.text(4)
        self.digits = try row.integer(5)
        self.period = try row.integer(6)
        self.createdAt = try row.date(7)
        self.expiresAt = try row.date(8)
        self.confirmedAt = try row.optionalDate(9)
        self.lastUsedStep = try row.optionalInteger(10).map(Int64.init)
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
