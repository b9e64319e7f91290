import Foundation
import TwofoldAPI
import Vapor

/// Administration (API.md): users, unlocking, the audit trail. Every call needs an admin's token
/// and every change is itself audited.
struct AdminController: EndpointCollection {
    let clock: ServerClock
    let audit: Auditor
    let sessions: SessionService
    let guards: FactorGuard
    let users: any UserStore

    init(_ context: TwofoldContext) {
        clock = context.clock
        audit = context.audit
        sessions = context.sessions
        guards = context.guards
        users = context.users
    }

    func boot(routes: EndpointRoutes) {
        routes.on(API.Admin.users, use: users)
        routes.on(API.Admin.user, use: user)
        routes.on(API.Admin.unlock, use: unlock)
        routes.on(API.Admin.audit, use: audit)
    }

    @Sendable func users(request: Request) async throws -> Response {
        let page = try Page(try QueryParameters(request))
        let users = try await users.users(offset: page.range.lowerBound, limit: page.range.count)
        return try Response.json(AdminUsersResponse(users: users.map(\.dto)))
    }

    @Sendable func user(request: Request) async throws -> Response {
        let user = try await findUser(request)
        let userID = user.id
        let sessions = try await sessions.list(userID: userID, current: nil)
        let events = try await audit.events(userID: userID)
        return try Response.json(AdminUserDetail(user: user.dto, sessions: sessions, audit: events))
    }

    @Sendable func unlock(request: Request) async throws -> Response {
        var user = try await findUser(request)
        let caller = try request.caller
        let wasLocked = try await users.unlock(
            userID: user.id, now: clock.now())
        if wasLocked { user = try await findUser(request) }
        // Factor lockouts and the 24-hour failure count start again too.
        try await guards.reset(userID: user.id)
        try await audit.record(
            .userUnlocked, user: user.id, actor: caller.userID, detail: wasLocked ? "unlocked" : "was not locked",
            origin: request.origin)
        return try Response.json(user.dto)
    }

    @Sendable func audit(request: Request) async throws -> Response {
        let query = try QueryParameters(request)
        let page = try Page(query)
        let userID = try query.value("userId").map { text in
            guard let id = UUID(uuidString: text) else {
                throw InputValidation.failure(["userId": "must be a user's id (a UUID)"])
            }
            return id
        }
        let type = try query.value("type").map { text in
            guard (1...64).contains(text.unicodeScalars.count) else {
                throw InputValidation.failure(["type": "must be 1 to 64 characters, an audit event type"])
            }
            return text
        }
        let events = try await audit.events(
            userID: userID, type: type, offset: page.range.lowerBound, limit: page.range.count)
        return try Response.json(AuditEventsResponse(events: events))
    }

    func findUser(_ request: Request) async throws -> User {
        guard let id = request.parameters.get("userID", as: UUID.self),
            let user = try await users.user(id: id)
        else { throw Problem(status: 404, code: .notFound, title: "No such user") }
        return user
    }

    /// `?limit=` (1–200, default 50) and `?offset=` (0–1,000,000, default 0). A value that is
    /// not a whole number in range is refused, never read as the default.
    struct Page {
        let range: Range<Int>

        init(_ query: QueryParameters) throws {
            var errors: [String: String] = [:]
            func integer(_ name: String, in allowed: ClosedRange<Int>, default fallback: Int) throws -> Int {
                guard let text = try query.value(name) else { return fallback }
                guard let value = Int(text), allowed.contains(value) else {
                    errors[name] = "must be a whole number from \(allowed.lowerBound) to \(allowed.upperBound)"
                    return fallback
                }
                return value
            }
            let limit = try integer("limit", in: 1...200, default: 50)
            let offset = try integer("offset", in: 0...1_000_000, default: 0)
            guard errors.isEmpty else { throw InputValidation.failure(errors) }
            range = offset..<(offset + limit)
        }
    }
}

/// A request's query parameters, percent-decoded. A name given twice is refused: which of its
/// values counts would be a guess.
struct QueryParameters {
    private let values: [String: [String]]

    init(_ request: Request) throws {
        guard let components = URLComponents(string: "?" + (request.url.query ?? "")) else {
            throw InputValidation.failure(["query": "is not a well-formed query string"])
        }
        let items = components.queryItems ?? []
        values = Dictionary(grouping: items, by: \.name).mapValues { $0.map { $0.value ?? "" } }
    }

    /// The value of `name`, or `nil` when it is absent.
    func value(_ name: String) throws -> String? {
        guard let given = values[name] else { return nil }
        guard given.count == 1 else { throw InputValidation.failure([name: "must be given once"]) }
        return given[0]
    }
}
