import Fluent
import Foundation

/// One security event. The table is append-only: nothing in the server updates or deletes rows,
/// and no secret (code, password, token, PIN, full phone number) is ever written to it.
final class AuditEvent: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "audit_events"

    @ID(key: .id) var id: UUID?
    @Field(key: "occurred_at") var occurredAt: Date
    @Field(key: "type") var type: String
    @OptionalField(key: "user_id") var userID: UUID?
    @OptionalField(key: "actor_id") var actorID: UUID?
    @OptionalField(key: "ip_address") var ipAddress: String?
    @OptionalField(key: "user_agent") var userAgent: String?
    @Field(key: "detail") var detail: String

    init() {}

    init(
        type: String, userID: UUID?, actorID: UUID?, ipAddress: String?, userAgent: String?, detail: String,
        now: Date
    ) {
        self.type = type
        self.userID = userID
        self.actorID = actorID
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.detail = detail
        self.occurredAt = now
    }
}
