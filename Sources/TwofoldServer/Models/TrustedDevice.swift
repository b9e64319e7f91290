import Fluent
import Foundation
import TwofoldAPI

/// A browser or app the user chose to remember after a second step (seed 002, "remember this
/// device for 30 days"). The token it holds is stored only as a hash.
final class TrustedDevice: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "trusted_devices"

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "name") var name: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "last_used_at") var lastUsedAt: Date?
    @OptionalField(key: "revoked_at") var revokedAt: Date?

    init() {}

    init(userID: UUID, tokenHash: String, name: String, now: Date, expiresAt: Date) {
        self.userID = userID
        self.tokenHash = tokenHash
        self.name = name
        self.createdAt = now
        self.expiresAt = expiresAt
    }

    var dto: TrustedDeviceDTO {
        TrustedDeviceDTO(id: id!, name: name, createdAt: createdAt, lastUsedAt: lastUsedAt, expiresAt: expiresAt)
    }
}
