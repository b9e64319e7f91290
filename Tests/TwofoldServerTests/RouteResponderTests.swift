import Foundation
import Testing
import TwofoldAPI
import Vapor
import VaporTesting

@testable import TwofoldServer

/// `RouteResponder` reads a request's path as Vapor's router is given it, and routes as Vapor's
/// own responder does.
struct RouteResponderTests {
    @Test(arguments: [
        "/", "/healthz", "/api/v1/2fa/totp/validate", "/api/v1/2fa/totp/validate?x=1&y=/z",
        "/api/v1/auth/mfa/trusted-devices/abc#part", "/a//b/", "//host/a/b", "/a%20b/c%3Bd/e%3bf",
        "http://example.com/api/v1/healthz?q", "/caf%C3%A9", "/a;b/c", "/%2F/x", "",
        // Not ASCII: a combining mark after "/" would join it in a Character-wise split.
        "/a/\u{301}b", "/café",
    ])
    func readsThePathAsVaporsRouterIsGivenIt(target: String) {
        let url = URI(string: target)
        #expect(RouteResponder.components(of: url) == url.path.split(separator: "/").map(String.init))
    }

    @Test func routesAsVaporDoesHeadFallingBackToGetAndUnmatchedRequestsToAProblem() async throws {
        try await withTestApp { app in
            try await app.testing().test(.GET, API.Operations.health.path()) { response in
                #expect(response.status == .ok)
            }
            try await app.testing().test(.HEAD, API.Operations.health.path()) { response in
                #expect(response.status == .ok)
            }
            try await app.testing().test(.GET, "/healthz?verbose=1") { response in
                #expect(response.status == .ok)
            }
            try await app.testing().test(.GET, "api/v1/no-such-thing") { response in
                #expect(response.status == .notFound)
                #expect(response.headers.contentType?.description.hasPrefix("application/problem+json") == true)
            }
            try await app.testing().test(.DELETE, API.Operations.health.path()) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers.first(name: .allow)?.contains("GET") == true)
            }
        }
    }
}
