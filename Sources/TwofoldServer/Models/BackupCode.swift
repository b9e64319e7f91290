import Fluent
import Foundation

/// One backup code, stored as a keyed lookup value (HMAC, to find the row without trying every
/// hash) and a salted slow hash (bcrypt) — ASVS v5 6.5.2 for secrets under 112 bits.
final class BackupCode: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "backup_codes"

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    @Field(key: "lookup") var lookup: String
    @Field(key: "code_hash") var codeHash: String
    @Field(key: "created_at") var createdAt: Date
    @OptionalField(key: "used_at") var usedAt: Date?

    init() {}

    init(userID: UUID, lookup: String, codeHash: String, now: Date) {
        self.userID = userID
        self.lookup = lookup
        self.codeHash = codeHash
        self.createdAt = now
    }
}
