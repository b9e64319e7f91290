import TwofoldAPI
import Vapor

/// `GET /.well-known/jwks.json`: the public keys that verify access tokens, the current one and retired ones whose tokens may be live.
struct JWKSController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.jwks, use: jwks)
    }

    @Sendable func jwks(request: Request) async throws -> Response {
        let response = try Response.json(request.twofold.tokens.jwks(now: request.twofold.clock.now()))
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
        return response
    }
}
