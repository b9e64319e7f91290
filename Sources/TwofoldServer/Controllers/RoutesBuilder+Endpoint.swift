import TwofoldAPI
import Vapor

extension RoutesBuilder {
    /// Registers `handler` for `endpoint`: its method and path, behind what its access needs (a
    /// bearer token; an administrator's). The only way a handler is registered, so every route
    /// the server answers is an endpoint of `API`.
    @discardableResult
    func on<Body, Answer>(
        _ endpoint: Endpoint<Body, Answer>, use handler: @escaping @Sendable (Request) async throws -> Response
    ) -> Route {
        let builder: any RoutesBuilder
        switch endpoint.access {
        case .anyone: builder = self
        case .signedIn: builder = grouped(BearerAuthentication())
        case .admin: builder = grouped(BearerAuthentication(), AdminOnly())
        }
        let path = endpoint.components.map { component -> PathComponent in
            switch component {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
        return builder.on(HTTPMethod(rawValue: endpoint.method.rawValue), path, use: handler)
    }
}
