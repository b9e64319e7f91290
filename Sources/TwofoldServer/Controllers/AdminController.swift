import Foundation
import TwofoldAPI
import Vapor

/// Administration over JSON (`Administration`): users, unlocking, the audit trail. Every call
/// needs an admin's token.
struct AdminController: EndpointCollection {
    let administration: Administration
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.Admin.users, use: users)
        routes.on(API.Admin.user, use: user)
        routes.on(API.Admin.unlock, use: unlock)
        routes.on(API.Admin.audit, use: audit)
        routes.on(API.Admin.resetMFA, use: resetMFA)
    }

    @Sendable func users(request: Request, _: NoContent) async throws -> AdminUsersResponse {
        try await administration.users(try request.query())
    }

    @Sendable func user(request: Request, _: NoContent) async throws -> AdminUserDetail {
        try await administration.user(request.parameters.get("userID", as: UUID.self))
    }

    @Sendable func unlock(request: Request, _: NoContent) async throws -> UserDTO {
        let id = request.parameters.get("userID", as: UUID.self)
        return try await administration.unlock(
            id, by: try request.caller, adminUser: try await request.currentUser(in: callers), origin: request.origin)
    }

    @Sendable func resetMFA(request: Request, _: NoContent) async throws -> UserDTO {
        try await administration.resetMFA(
            request.parameters.get("userID", as: UUID.self), by: try request.caller,
            adminUser: try await request.currentUser(in: callers), origin: request.origin)
    }

    @Sendable func audit(request: Request, _: NoContent) async throws -> AuditEventsResponse {
        try await administration.events(try request.query())
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
