import Fluent
import Foundation
import SQLKit

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

    /// The columns `init(row:tokenHash:)` reads, in order.
    static let columns = "id, user_id, first_factor, created_at, expires_at, consumed_at, ip_address"

    /// A stored flow from the columns `columns` names.
    init(row: StatementRow, tokenHash: String) throws {
        self.id = try row.uuid(0)
        self.$id.exists = true
        self.tokenHash = tokenHash
        self.userID = try row.uuid(1)
        self.firstFactor = try row.text(2)
        self.createdAt = try row.date(3)
        self.expiresAt = try row.date(4)
        self.consumedAt = try row.optionalDate(5)
        self.ipAddress = try row.optionalText(6)
    }

    init(tokenHash: String, userID: UUID, firstFactor: String, now: Date, expiresAt: Date, ipAddress: String?) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.firstFactor = firstFactor
        self.createdAt = now
        self.expiresAt = expiresAt
        self.ipAddress = ipAddress
    }
}
