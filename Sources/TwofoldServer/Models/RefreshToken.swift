import Fluent
import Foundation

/// One refresh token of a session's family, stored only as its SHA-256 hash. Each is used once:
/// `used_at` is claimed by an atomic conditional update when it is exchanged.
final class RefreshToken: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "refresh_tokens"

    @ID(key: .id) var id: UUID?
    @Field(key: "session_id") var sessionID: UUID
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "used_at") var usedAt: Date?

    init() {}

    init(sessionID: UUID, tokenHash: String, now: Date, expiresAt: Date) {
        self.sessionID = sessionID
        self.tokenHash = tokenHash
        self.createdAt = now
        self.expiresAt = expiresAt
    }
}
