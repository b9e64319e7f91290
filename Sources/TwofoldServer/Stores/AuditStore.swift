import Foundation

/// Where a request came from, as the audit log and remembered devices record it.
struct RequestOrigin: Sendable, Equatable {
    var address: String?
    var userAgent: String?

    static let none = RequestOrigin(address: nil, userAgent: nil)
}

/// One security event (`audit_events`, append-only).
struct AuditEntry: Sendable, Equatable {
    var id: UUID
    var occurredAt: Date
    var event: AuditLog.Event
    var userID: UUID?
    var actorID: UUID?
    var origin: RequestOrigin
    /// Free text for people; never a secret.
    var detail: String
}

/// The audit log's table.
protocol AuditStore: Sendable {
    func append(_ entry: AuditEntry) async throws
}

/// `AuditStore` on the server's database.
struct SQLAuditStore: AuditStore {
    let database: any SQLExecutor

    func append(_ entry: AuditEntry) async throws {
        try await database.run(
            Statement(
                """
                INSERT INTO audit_events (id, occurred_at, type, user_id, actor_id, ip_address, user_agent, detail)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, .uuid(entry.id), .date(entry.occurredAt), .text(entry.event.rawValue), .uuid(entry.userID),
                .uuid(entry.actorID), .text(entry.origin.address), .text(entry.origin.userAgent),
                .text(entry.detail)))
    }
}
