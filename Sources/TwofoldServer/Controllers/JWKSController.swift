import TwofoldAPI
import Vapor

/// `GET /.well-known/jwks.json`: the public keys that verify access tokens, the current one and retired ones whose tokens may be live.
struct JWKSController: EndpointCollection {
    let tokens: TokenService
    let clock: ServerClock

    func boot(routes: EndpointRoutes) {
        routes.on(API.Operations.jwks, use: jwks)
    }

    @Sendable func jwks(request: Request) async throws -> Response {
        let response = try Response.json(tokens.jwks(now: clock.now()))
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
        return response
    }
}
