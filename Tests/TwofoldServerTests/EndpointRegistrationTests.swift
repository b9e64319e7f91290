import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// The server answers exactly the endpoints `API` defines, with the access each declares, and
/// the pages `Pages` defines.
@Suite struct EndpointRegistrationTests {
    @Test func everyEndpointHasAHandlerAndEveryHandlerAnEndpoint() async throws {
        try await withTestApp { app in
            let served = app.routes.all.map { route in
                "\(route.method.rawValue) /"
                    + route.path.map { component -> String in
                        if case .parameter(let name) = component { return "{\(name)}" }
                        return component.description
                    }.joined(separator: "/")
            }
            #expect(served.count == Set(served).count, "a route registered twice")
            let defined = API.all.map(\.route)
            #expect(defined.count == Set(defined).count, "an endpoint listed twice in API.all")
            // The served routes are the API's and the pages', two registries that never overlap.
            let pages = Set(Pages.all.map(\.route))
            #expect(pages.count == Pages.all.count, "a page listed twice in Pages.all")
            #expect(pages.isDisjoint(with: defined), "a page at an endpoint's route")
            #expect(Pages.all.allSatisfy { !$0.path.hasPrefix("api/") })
            let withoutEndpoint = Set(served).subtracting(defined).subtracting(pages)
            let withoutHandler = Set(defined).subtracting(served)
            #expect(
                withoutEndpoint.isEmpty,
                "handlers with no endpoint in API or page in Pages: \(withoutEndpoint.sorted())")
            #expect(withoutHandler.isEmpty, "endpoints with no handler: \(withoutHandler.sorted())")
        }
    }

    /// Each endpoint that needs a bearer token refuses a request without one, and each that does
    /// not, does not ask for one.
    @Test func accessIsWhatTheEndpointDeclares() async throws {
        try await withTestApp { app in
            for endpoint in API.all {
                let path = endpoint.template.replacingOccurrences(
                    of: #"\{[A-Za-z]+\}"#, with: "00000000-0000-0000-0000-000000000000", options: .regularExpression)
                var status: UInt = 0
                var body = ""
                try await app.testing().test(
                    HTTPMethod(rawValue: endpoint.method.rawValue), path, headers: .client("10.3.3.3"),
                    body: ByteBuffer(string: "{}")
                ) { response in
                    status = response.status.code
                    body = response.body.string
                }
                let askedForToken =
                    status == 401 && body.contains("\"code\":\"unauthorized\"")
                    && body.contains("Bearer")
                switch endpoint.access {
                case .signedIn, .admin:
                    #expect(status == 401, "\(endpoint) answered \(status) without a token")
                case .anyone:
                    #expect(!askedForToken, "\(endpoint) asked for a token: \(body)")
                }
            }
        }
    }
}
