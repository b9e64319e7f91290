import TwofoldAPI
import Vapor

/// `GET /.well-known/jwks.json`: the public keys that verify access tokens, the current one and retired ones whose tokens may be live.
struct JWKSController: EndpointCollection {
    let tokens: TokenService
    let clock: ServerClock

    func boot(routes: EndpointRoutes) {
        routes.on(API.Operations.jwks, reply: jwks)
    }

    @Sendable func jwks(request: Request, _: NoContent) async throws -> Reply<JSONWebKeySet> {
        Reply(answer: tokens.jwks(now: clock.now()), status: .ok, headers: ["Cache-Control": "public, max-age=300"])
    }
}
