import Foundation
import Testing
import TwofoldAPI
import Vapor
import VaporTesting

@testable import TwofoldServer

/// Routing: HEAD falls back to GET, a query does not change the route, an unknown path is a
/// 404 problem and a known path with another method a 405 naming the methods it has.
struct RoutingTests {
    @Test func routesAsVaporDoesHeadFallingBackToGetAndUnmatchedRequestsToAProblem() async throws {
        try await withTestApp { app in
            try await app.raw(.GET, API.Operations.health.path()) { response in
                #expect(response.status == .ok)
            }
            try await app.raw(.HEAD, API.Operations.health.path()) { response in
                #expect(response.status == .ok)
            }
            try await app.raw(.GET, "/healthz?verbose=1") { response in
                #expect(response.status == .ok)
            }
            try await app.raw(.GET, "api/v1/no-such-thing") { response in
                #expect(response.status == .notFound)
                #expect(response.headers.contentType?.description.hasPrefix("application/problem+json") == true)
            }
            try await app.raw(.DELETE, API.Operations.health.path()) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers.first(name: .allow)?.contains("GET") == true)
            }
        }
    }
}
