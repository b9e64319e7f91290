import Foundation

/// One entry of the audit trail.
public struct AuditEventDTO: Codable, Sendable, Equatable {
    public var id: UUID
    public var occurredAt: Date
    public var type: String
    public var userId: UUID?
    public var actorId: UUID?
    public var ipAddress: String?
    public var userAgent: String?
    public var detail: String

    public init(
        id: UUID, occurredAt: Date, type: String, userId: UUID?, actorId: UUID?, ipAddress: String?,
        userAgent: String?, detail: String
    ) {
        self.id = id
        self.occurredAt = occurredAt
        self.type = type
        self.userId = userId
        self.actorId = actorId
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.detail = detail
    }
}

/// `GET /admin/audit`.
public struct AuditEventsResponse: Codable, Sendable {
    public var events: [AuditEventDTO]
    public init(events: [AuditEventDTO]) { self.events = events }
}

/// `GET /admin/users`.
public struct AdminUsersResponse: Codable, Sendable {
    public var users: [UserDTO]
    public init(users: [UserDTO]) { self.users = users }
}

/// `GET /admin/users/{id}`: the user, their active sessions and recent audit trail.
public struct AdminUserDetail: Codable, Sendable {
    public var user: UserDTO
    public var sessions: [SessionDTO]
    public var audit: [AuditEventDTO]

    public init(user: UserDTO, sessions: [SessionDTO], audit: [AuditEventDTO]) {
        self.user = user
        self.sessions = sessions
        self.audit = audit
    }
}
