import TwofoldAPI
import Vapor

/// A controller: a set of handlers, each registered for one endpoint of `API`.
protocol EndpointCollection: Sendable {
    func boot(routes: EndpointRoutes)
}

/// Where controllers register their handlers: the application's routes, with the middleware
/// each kind of access needs (a bearer token; an administrator's) in front.
struct EndpointRoutes {
    let anyone: any RoutesBuilder
    let signedIn: any RoutesBuilder
    let admin: any RoutesBuilder
    /// In front of every change, after the access checks (`Idempotency-Key`).
    let idempotency: IdempotencyMiddleware

    init(
        _ routes: any RoutesBuilder, bearer: BearerAuthentication, adminOnly: AdminOnly,
        idempotency: IdempotencyMiddleware
    ) {
        anyone = routes
        signedIn = routes.grouped(bearer)
        admin = routes.grouped(bearer, adminOnly)
        self.idempotency = idempotency
    }

    /// Registers `handler` for `endpoint`: its method and path, behind what its access needs.
    /// The only way a handler is registered, so every route the server answers is an endpoint of
    /// `API`.
    @discardableResult
    func on(
        _ endpoint: some EndpointDefinition, use handler: @escaping @Sendable (Request) async throws -> Response
    ) -> Route {
        var builder: any RoutesBuilder
        switch endpoint.access {
        case .anyone: builder = anyone
        case .signedIn: builder = signedIn
        case .admin: builder = admin
        }
        if endpoint.method != .get { builder = builder.grouped(idempotency) }
        let path = endpoint.components.map { component -> PathComponent in
            switch component {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
        return builder.on(HTTPMethod(rawValue: endpoint.method.rawValue), path, use: handler)
    }
}
