import Fluent
import Foundation

/// A sign-in waiting for its second step (`otpFlowId` / `tempToken`). The token the client holds
/// is stored only as a hash; the flow belongs to one user, lives 5 minutes and is consumed once.
final class LoginFlow: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "login_flows"

    @ID(key: .id) var id: UUID?
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "user_id") var userID: UUID
    /// The factor already proven, as an RFC 8176 value (`pwd`).
    @Field(key: "first_factor") var firstFactor: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "consumed_at") var consumedAt: Date?
    @OptionalField(key: "ip_address") var ipAddress: String?

    init() {}

    init(tokenHash: String, userID: UUID, firstFactor: String, now: Date, expiresAt: Date, ipAddress: String?) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.firstFactor = firstFactor
        self.createdAt = now
        self.expiresAt = expiresAt
        self.ipAddress = ipAddress
    }
}
