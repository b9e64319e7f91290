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
                try await app.raw(
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

/// Handlers are registered by their endpoint's types: given the declared `Body`, answering the
/// declared `Answer` at one of the declared success statuses.
@Suite struct TypedHandlerTests {
    static let fixed = Endpoint<NoContent, SuccessResponse>(.post, "test/fixed", .anyone)
    static let either = Endpoint<SMSSetupRequest, CodeSentResponse>(.post, "test/either", .anyone, success: [200, 202])
    static let sent = CodeSentResponse(
        nextAllowedAt: Date(timeIntervalSince1970: 1_800_000_060), maskedDestination: "+1 *** *** **23",
        expiresAt: Date(timeIntervalSince1970: 1_800_000_300))

    static func routes(_ app: Application) throws {
        let root = EndpointRoutes(
            app.routes,
            bearer: BearerAuthentication(
                tokens: app.twofold.tokens, sessions: app.twofold.sessions, clock: app.twofold.clock),
            recoveryGate: RecoveryGate(
                callers: Callers(users: app.twofold.users), secondFactors: app.twofold.secondFactors),
            adminOnly: AdminOnly(policy: app.twofold.policy),
            idempotency: IdempotencyMiddleware(idempotency: app.twofold.idempotency, maxBodyBytes: 4096))
        root.on(fixed) { _, _ in SuccessResponse() }
        // `202` when the body names a number, `201` (undeclared) when it names "undeclared".
        root.on(either) { _, body in
            switch body.phoneNumber {
            case nil: Reply(answer: sent, status: .ok)
            case "undeclared"?: Reply(answer: sent, status: .created)
            default: Reply(answer: sent, status: .accepted, headers: ["X-Test": "yes"])
            }
        }
    }

    /// A body that may be left out reads as what `{}` reads as: no conformance lets a client
    /// skip a member the type requires.
    @Test func anAbsentBodyIsAnEmptyObject() throws {
        #expect(
            SMSSetupRequest().phoneNumber
                == (try Wire.decoder().decode(SMSSetupRequest.self, from: Data("{}".utf8))).phoneNumber)
        #expect(
            PasskeyRegistrationOptionsRequest().hints
                == (try Wire.decoder().decode(PasskeyRegistrationOptionsRequest.self, from: Data("{}".utf8))).hints)
    }

    @Test func aReplyIsSentAtADeclaredStatusOnly() async throws {
        try await withTestApp(routes: Self.routes) { app in
            // A body a `NoContent` endpoint does not read is ignored, whatever it holds.
            try await app.raw(.POST, "test/fixed", body: ByteBuffer(string: "not json")) { response in
                #expect(response.status == .ok)
                #expect((try? response.decode(SuccessResponse.self))?.success == true)
            }
            // A body a client may leave out reads as empty.
            try await app.raw(.POST, "test/either") { response in
                #expect(response.status == .ok)
            }
            try await app.raw(
                .POST, "test/either", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: #"{"phoneNumber":"+14155550123"}"#)
            ) { response in
                #expect(response.status == .accepted)
                #expect(response.headers.first(name: "X-Test") == "yes")
                let sent = try? response.decode(CodeSentResponse.self)
                #expect(sent?.maskedDestination == Self.sent.maskedDestination)
            }
            // A malformed body is the client's fault.
            try await app.raw(
                .POST, "test/either", headers: ["Content-Type": "application/json"], body: ByteBuffer(string: "{")
            ) { response in
                #expect(response.status.code >= 400 && response.status.code < 500)
            }
            // A status the endpoint does not declare is the server's fault, never sent as is.
            try await app.raw(
                .POST, "test/either", headers: ["Content-Type": "application/json"],
                body: ByteBuffer(string: #"{"phoneNumber":"undeclared"}"#)
            ) { response in
                #expect(response.status == .internalServerError)
            }
        }
    }
}
