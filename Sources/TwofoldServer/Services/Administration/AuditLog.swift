import Foundation
import TwofoldAPI

/// Records security events in the audit log's store.
struct Auditor: Sendable {
    let store: any AuditStore
    let clock: ServerClock

    /// Records `event`. `detail` is free text for people; never put a secret in it.
    func record(
        _ event: AuditEvent, user: UUID?, actor: UUID? = nil, detail: String = "", origin: RequestOrigin
    ) async throws {
        try await store.append(entry(event, user: user, actor: actor, detail: detail, origin: origin))
    }

    /// The entry `record` would append now, for a statement that writes it with others.
    func entry(
        _ event: AuditEvent, user: UUID?, actor: UUID? = nil, detail: String = "", origin: RequestOrigin
    ) -> AuditEntry {
        let now = clock.now()
        return AuditEntry(
            id: SecureRandom.timeOrderedUUID(at: now), occurredAt: now, event: event, userID: user, actorID: actor,
            origin: origin, detail: detail)
    }

    /// Events, newest first (the admin's audit trail).
    func events(
        userID: UUID? = nil, type: String? = nil, from: Date? = nil, to: Date? = nil, offset: Int = 0, limit: Int = 50
    ) async throws -> [AuditEventDTO] {
        try await store.events(userID: userID, type: type, from: from, to: to, offset: offset, limit: limit)
    }
}
