import Fluent
import Foundation
import TwofoldAPI

/// A signed-in session: one login, its refresh-token family and the access tokens issued from it.
/// Revoking the session revokes the whole family.
final class Session: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "sessions"

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    /// When the user last proved a factor in this session (the `auth_time` claim).
    @Field(key: "auth_time") var authTime: Date
    /// RFC 8176 method references, comma-separated (`pwd,otp`).
    @Field(key: "amr") var amr: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "last_used_at") var lastUsedAt: Date
    @OptionalField(key: "revoked_at") var revokedAt: Date?
    @OptionalField(key: "revoke_reason") var revokeReason: String?
    @OptionalField(key: "ip_address") var ipAddress: String?
    @OptionalField(key: "user_agent") var userAgent: String?
    /// The factors this session added, each between newlines (`SessionService.recordAdded`):
    /// none of them can step this session up.
    @OptionalField(key: "added_factors") var addedFactors: String?

    init() {}

    init(userID: UUID, methods: [String], now: Date, ipAddress: String?, userAgent: String?) {
        self.userID = userID
        self.authTime = now
        self.amr = methods.joined(separator: ",")
        self.createdAt = now
        self.lastUsedAt = now
        self.ipAddress = ipAddress
        self.userAgent = userAgent
    }

    var methods: [String] { amr.split(separator: ",").map(String.init) }

    func dto(current: UUID?) -> SessionDTO {
        SessionDTO(
            id: id!, createdAt: createdAt, lastUsedAt: lastUsedAt, authTime: authTime, methods: methods,
            userAgent: userAgent, ipAddress: ipAddress, current: id == current)
    }
}
