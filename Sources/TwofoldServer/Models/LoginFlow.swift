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

    /// The columns `init(row:tokenHash:)` reads, from the `login_flows` table of a query, each as
    /// `flow_<column>` (so they can sit beside the user's columns, `User.selection`).
    static let selection = [
        "id", "user_id", "first_factor", "created_at", "expires_at", "consumed_at", "ip_address",
    ].map { "login_flows.\($0) AS flow_\($0)" }.joined(separator: ", ")

    /// A stored flow from the columns `selection` names.
    init(row: any SQLRow, tokenHash: String) throws {
        self.id = try row.decode(column: "flow_id", as: UUID.self)
        self.$id.exists = true
        self.tokenHash = tokenHash
        self.userID = try row.decode(column: "flow_user_id", as: UUID.self)
        self.firstFactor = try row.decode(column: "flow_first_factor", as: String.self)
        self.createdAt = try row.decode(column: "flow_created_at", as: Date.self)
        self.expiresAt = try row.decode(column: "flow_expires_at", as: Date.self)
        self.consumedAt = try row.decode(column: "flow_consumed_at", as: Date?.self)
        self.ipAddress = try row.decode(column: "flow_ip_address", as: String?.self)
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
