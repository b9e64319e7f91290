import Fluent
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// The login-flow rules of issue B: 5 minutes, one user, consumed exactly once.
@Suite struct LoginFlowTests {
    struct FlowRequest: Content {
        let token: String
        let userId: UUID?
    }

    /// Routes that drive `LoginFlowService` the way a second-step endpoint does.
    static let routes: @Sendable (Application) throws -> Void = { app in
        app.post("test", "flows", ":username") { request async throws -> String in
            let name = try #require(request.parameters.get("username"))
            let user = try #require(try await request.application.twofold.users.user(identifier: name))
            return try await request.application.twofold.loginFlows.start(
                user: user, firstFactor: "pwd", origin: request.origin
            ).token
        }
        app.post("test", "flows", "complete") { request async throws -> String in
            let body = try request.content.decode(FlowRequest.self)
            // The owner check of `active`, then what a second step reads and consumes.
            _ = try await request.application.twofold.loginFlows.active(body.token, userID: body.userId)
            let flow = try await request.application.twofold.loginFlows.pending(body.token)
            try await request.application.twofold.loginFlows.consume(flow)
            return "completed"
        }
    }

    func start(_ app: Application, for username: String) async throws -> String {
        var token = ""
        try await app.raw(.POST, "test/flows/\(username)") { response in
            #expect(response.status == .ok)
            token = response.body.string
        }
        return token
    }

    func complete(_ app: Application, _ token: String, userID: UUID? = nil) async throws -> (UInt, String?) {
        var result: (UInt, String?) = (0, nil)
        var body = ["token": token]
        if let userID { body["userId"] = userID.uuidString }
        try await app.raw(.POST, "test/flows/complete", headers: jsonHeaders, body: json(body)) { response in
            result = (response.status.code, response.status == .ok ? nil : try response.problem().code)
        }
        return result
    }

    @Test func aFlowIsConsumedExactlyOnce() async throws {
        try await withTestApp(routes: Self.routes) { app in
            let tokens = try await Accounts.signUp(app)
            let token = try await start(app, for: "alice")
            try #require(try await complete(app, token, userID: tokens.user.id).0 == 200)
            let again = try await complete(app, token, userID: tokens.user.id)
            #expect(again.0 == 409)
            #expect(again.1 == "already_used")
        }
    }

    @Test(.tags(.database)) func parallelCompletionsGiveOneSuccess() async throws {
        try await withTestApp(routes: Self.routes) { app in
            _ = try await Accounts.signUp(app)
            let token = try await start(app, for: "alice")
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<20 { group.addTask { try await complete(app, token).0 } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
        }
    }

    /// The second step may read the flow and its user before an account lock lands; consuming
    /// the flow checks the user again.
    @Test func aFlowIsNotConsumedOnceItsUserIsLocked() async throws {
        try await withTestApp(routes: Self.routes) { app in
            _ = try await Accounts.signUp(app)
            let token = try await start(app, for: "alice")
            let sql = try #require(app.db as? any SQLDatabase)
            try await sql.raw("UPDATE users SET status = 'locked' WHERE username = 'alice'").run()
            let refused = try await complete(app, token)
            #expect(refused.0 == 403)
            #expect(refused.1 == "account_locked")
            try await sql.raw("UPDATE users SET status = 'active' WHERE username = 'alice'").run()
            #expect(try await complete(app, token).0 == 200)
        }
    }

    @Test func anExpiredFlowIsRefused() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock, routes: Self.routes) { app in
            _ = try await Accounts.signUp(app)
            let token = try await start(app, for: "alice")
            clock.advance(by: 5 * 60)
            let result = try await complete(app, token)
            #expect(result.0 == 401)
            #expect(result.1 == "expired")
        }
    }

    @Test func aFlowBelongsToOneUser() async throws {
        try await withTestApp(routes: Self.routes) { app in
            _ = try await Accounts.signUp(app, "alice")
            let bob = try await Accounts.signUp(app, "bob")
            let alicesFlow = try await start(app, for: "alice")
            let result = try await complete(app, alicesFlow, userID: bob.user.id)
            #expect(result.0 == 401)
            #expect(result.1 == "unauthorized")
            // Refusing the foreign use did not consume it.
            try #require(try await complete(app, alicesFlow).0 == 200)
        }
    }

    @Test func unknownFlowsAreRefused() async throws {
        try await withTestApp(routes: Self.routes) { app in
            try #require(try await complete(app, "no-such-flow").0 == 401)
        }
    }
}

@Suite struct StepUpTests {
    @Test func aPasswordOnlySessionMustStepUp() async throws {
        try await withTestApp(routes: { app in
            app.grouped(
                BearerAuthentication(
                    tokens: app.twofold.tokens, sessions: app.twofold.sessions, clock: app.twofold.clock)
            ).get("test", "sensitive") { request async throws -> String in
                try await app.twofold.policy.require(
                    .remove(proof: "totp"), caller: request.caller,
                    user: try await request.currentUser(in: Callers(users: app.twofold.users)))
                return "ok"
            }
        }) { app in
            let tokens = try await Accounts.signUp(app)
            try await app.raw(.GET, "test/sensitive", headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .forbidden)
                try #require(try response.problem().code == "step_up_required")
            }
        }
    }
}

@Suite struct StepUpSessionTests {
    /// Stands in for a factor's check succeeding, to prove what step-up does to the session.
    static let routes: @Sendable (Application) throws -> Void = { app in
        let signedIn = app.grouped(
            BearerAuthentication(tokens: app.twofold.tokens, sessions: app.twofold.sessions, clock: app.twofold.clock))
        signedIn.post("test", "proven") { request async throws -> Response in
            let answer = StepUpResponse(
                accessToken: try await request.application.twofold.sessions.stepUp(
                    caller: try request.caller, amr: "otp", proof: .password))
            return Response(status: .ok, body: .init(data: try Wire.encoder().encode(answer)))
        }
        // Adding a factor to a password-only account: the password proven in the last 5 minutes.
        signedIn.get("test", "sensitive") { request async throws -> String in
            try await app.twofold.policy.require(
                .add(kind: .totp), caller: request.caller,
                user: try await request.currentUser(in: Callers(users: app.twofold.users)))
            return "ok"
        }
    }

    @Test func aProvenFactorRaisesAuthTimeForFiveMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock, routes: Self.routes) { app in
            let tokens = try await Accounts.signUp(app)
            clock.advance(by: 600)
            var stepped: StepUpResponse?
            try await app.raw(.POST, "test/proven", headers: .bearer(tokens.accessToken.token)) { response in
                stepped = try response.decode(StepUpResponse.self)
            }
            let token = try #require(stepped).accessToken.token
            try await app.raw(.GET, "test/sensitive", headers: .bearer(token)) { response in
                #expect(response.status == .ok)
            }
            // The session remembers it: a refreshed token carries the same amr and auth_time.
            let sessions = try await app.client().send(API.Auth.sessions, bearer: token)
            #expect(try #require(sessions.sessions.first).methods == ["pwd", "otp", "mfa"])
            clock.advance(by: 5 * 60 + 1)
            try await app.raw(.GET, "test/sensitive", headers: .bearer(token)) { response in
                #expect(response.status == .forbidden, "more than 5 minutes later, step up again")
            }
        }
    }

    @Test func stepUpRefusesMethodsThatAreNotEnabledAndChangesNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock, routes: Self.routes) { app in
            let tokens = try await Accounts.signUp(app)
            clock.advance(by: 6 * 60)
            let client = app.client()
            for body in [
                StepUpRequest(method: .totp, code: "123456"),
                StepUpRequest(method: FactorMethod(rawValue: "carrier-pigeon")),
            ] {
                let refused = try await refusal {
                    try await client.send(API.Auth.stepUp, body, bearer: tokens.accessToken.token)
                }
                #expect(refused.status == 422)
                #expect(refused.problem?.errors?["method"] != nil)
            }
            try await app.raw(.GET, "test/sensitive", headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .forbidden)
            }
            #expect(
                try await refusal { try await client.send(API.Auth.stepUp, StepUpRequest(method: .totp)) }.status == 401
            )
        }
    }
}
