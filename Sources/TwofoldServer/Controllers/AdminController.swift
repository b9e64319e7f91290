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

    func boot(routes: EndpointRoutes) {
        routes.on(API.Admin.users, use: users)
        routes.on(API.Admin.user, use: user)
        routes.on(API.Admin.unlock, use: unlock)
        routes.on(API.Admin.audit, use: audit)
    }

    @Sendable func users(request: Request) async throws -> Response {
        let page: PageQuery = try request.query()
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
        let query: AuditQuery = try request.query()
        let events = try await audit.events(
            userID: query.userId, type: query.type, offset: query.page.range.lowerBound,
            limit: query.page.range.count)
        return try Response.json(AuditEventsResponse(events: events))
    }

    func findUser(_ request: Request) async throws -> User {
        guard let id = request.parameters.get("userID", as: UUID.self),
            let user = try await users.user(id: id)
        else { throw Problem(status: 404, code: .notFound, title: "No such user") }
        return user
    }
}

extension Request {
    /// The request's query as `Query` reads it (`TwofoldAPI`'s own type, the one a client sends),
    /// or `422` naming every bad parameter.
    func query<Query: EndpointQuery>() throws -> Query {
        guard let components = URLComponents(string: "?" + (url.query ?? "")) else {
            throw InputValidation.failure(["query": "is not a well-formed query string"])
        }
        do {
            return try Query(items: components.queryItems ?? [])
        } catch {
            throw InputValidation.failure(error.errors)
        }
    }
}
