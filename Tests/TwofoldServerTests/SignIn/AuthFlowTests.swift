import Foundation
import Testing
import TwofoldAPI
import TwofoldServer
import VaporTesting

/// Register → login → an authenticated call → refresh → logout, and what each refuses.
@Suite struct AuthFlowTests {
    @Test func registerLoginCallRefreshLogout() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            #expect(tokens.user.username == "alice")
            #expect(tokens.accessToken.expiresAt.timeIntervalSince(Date(timeIntervalSince1970: 1_800_000_000)) == 900)

            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .ok)
                try #require(try response.decode(UserDTO.self).email == "alice@example.com")
            }

            var refreshed: RefreshResponse?
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": tokens.refreshToken.token])
            ) { response in
                #expect(response.status == .ok)
                refreshed = try response.decode(RefreshResponse.self)
            }
            let pair = try #require(refreshed)
            #expect(pair.refreshToken.token != tokens.refreshToken.token)

            try await app.testing().test(
                .POST, API.Auth.logout.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": pair.refreshToken.token])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.body.string == #"{"success":true}"#)
            }
            // The session is over: its access tokens and refresh tokens stop at once.
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(pair.accessToken.token)) {
                response in
                #expect(response.status == .unauthorized)
            }
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": pair.refreshToken.token])
            ) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func loginByUsernameWorksAndCaseDoesNotMatter() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.2"),
                body: json(["username": "ALICE", "password": Accounts.password])
            ) { response in
                #expect(response.status == .ok)
            }
        }
    }

    /// Each name field given must be a name, whichever counts; spaces and tabs around a name do
    /// not matter. What the OpenAPI document says of `LoginRequest` (schemathesis found a blank
    /// `username` beside an `email` accepted).
    @Test func everyNameFieldGivenToLoginMustBeAName() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let refused: [(String, String?, String)] = [
                ("alice@example.com", "", "username"), ("alice@example.com", " \t", "username"),
                ("", "alice", "email"), (String(repeating: "a", count: 255), nil, "email"),
            ]
            for (email, username, field) in refused {
                var body: [String: String] = ["email": email, "password": Accounts.password]
                body["username"] = username
                try await app.testing().test(
                    .POST, API.Auth.login.path(), headers: .client("10.0.0.4"), body: json(body)
                ) { response in
                    #expect(response.status == .unprocessableEntity, "\(body)")
                    let problem = try response.problem()
                    #expect(problem.errors?[field] != nil, "\(body)")
                }
            }
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.4"),
                body: json(["password": Accounts.password])
            ) { response in
                #expect(response.status == .unprocessableEntity)
                let problem = try response.problem()
                #expect(problem.errors?["email"] == "is required, or username in its place")
            }
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.4"),
                body: json(["username": " alice\t", "password": Accounts.password])
            ) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func wrongPasswordAndUnknownUserLookTheSame() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            for body in [
                ["email": "alice@example.com", "password": "wrong password"],
                ["email": "nobody@example.com", "password": Accounts.password],
            ] {
                try await app.testing().test(
                    .POST, API.Auth.login.path(), headers: .client("10.0.0.3"), body: json(body)
                ) {
                    response in
                    #expect(response.status == .unauthorized)
                    let problem = try response.problem()
                    #expect(problem.code == "invalid_credentials")
                    #expect(problem.detail == "The email, username or password is wrong.")
                }
            }
        }
    }

    @Test func accessTokensExpireAfterFifteenMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            clock.advance(by: 14 * 60)
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .ok)
            }
            clock.advance(by: 61)
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .unauthorized)
                try #require(try response.problem().code == "unauthorized")
            }
        }
    }

    @Test func aRefreshTokenExpiresAfterThirtyDaysUnused() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            clock.advance(by: 30 * 24 * 3600)
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": tokens.refreshToken.token])
            ) { response in
                #expect(response.status == .unauthorized)
                let problem = try response.problem()
                #expect(problem.code == "expired")
            }
        }
    }

    @Test func garbageBearerTokensAreUnauthorized() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var tampered = Array(tokens.accessToken.token)
            tampered[tampered.count / 2] = tampered[tampered.count / 2] == "A" ? "B" : "A"
            for token in ["", "abc", "a.b.c", String(tampered)] {
                try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(token)) { response in
                    #expect(response.status == .unauthorized, "\(token)")
                }
            }
            try await app.testing().test(.GET, API.Account.show.path()) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func reusedRefreshTokenRevokesTheFamilyAndIsAudited() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var second: RefreshResponse?
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": tokens.refreshToken.token])
            ) { response in
                second = try response.decode(RefreshResponse.self)
            }
            // The first token again: theft. The whole family dies, including the newest token.
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": tokens.refreshToken.token])
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                body: json(["refreshToken": try #require(second).refreshToken.token])
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await app.testing().test(
                .GET, API.Account.show.path(), headers: .bearer(try #require(second).accessToken.token)
            ) {
                response in
                #expect(response.status == .unauthorized)
            }
            let reuses = try await AuditQueries.count(type: "token.refresh_reused", on: app)
            #expect(reuses == 1)
        }
    }

    @Test(.tags(.database)) func twentyParallelRefreshesWithOneTokenGiveExactlyOneSuccess() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        var status: UInt = 0
                        try await app.testing().test(
                            .POST, API.Auth.refresh.path(), headers: .client("10.0.0.1"),
                            body: json(["refreshToken": tokens.refreshToken.token])
                        ) { response in status = response.status.code }
                        return status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 401 }.count == 19)
            try #require(try await AuditQueries.count(type: "token.refresh_reused", on: app) == 1)
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(tokens.accessToken.token)) {
                response in
                #expect(response.status == .unauthorized, "the family is revoked")
            }
        }
    }

    @Test func sessionsAreListedAndRevokedOneByOneOrAll() async throws {
        try await withTestApp { app in
            let first = try await Accounts.signUp(app)
            var second: AuthTokensResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.9"),
                body: json(["email": "alice@example.com", "password": Accounts.password])
            ) { response in second = try response.decode(AuthTokensResponse.self) }
            let other = try #require(second)

            var listed: SessionsResponse?
            try await app.testing().test(.GET, API.Auth.sessions.path(), headers: .bearer(first.accessToken.token)) {
                response in
                listed = try response.decode(SessionsResponse.self)
            }
            let sessions = try #require(listed).sessions
            #expect(sessions.count == 2)
            #expect(sessions.filter(\.current).count == 1)
            let otherID = try #require(sessions.first { !$0.current }).id

            try await app.testing().test(
                .DELETE, API.Auth.revokeSession.path("\(otherID)"), headers: .bearer(first.accessToken.token)
            ) { response in #expect(response.status == .ok) }
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(other.accessToken.token)) {
                response in
                #expect(response.status == .unauthorized)
            }
            try await app.testing().test(.POST, API.Auth.logoutAll.path(), headers: .bearer(first.accessToken.token)) {
                response in #expect(response.status == .ok)
            }
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(first.accessToken.token)) {
                response in
                #expect(response.status == .unauthorized)
            }
        }
    }

    @Test func aSessionOfAnotherUserCannotBeRevoked() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice")
            let bob = try await Accounts.signUp(app, "bob")
            var bobSessions: SessionsResponse?
            try await app.testing().test(.GET, API.Auth.sessions.path(), headers: .bearer(bob.accessToken.token)) {
                response in
                bobSessions = try response.decode(SessionsResponse.self)
            }
            let bobSession = try #require(bobSessions?.sessions.first).id
            try await app.testing().test(
                .DELETE, API.Auth.revokeSession.path("\(bobSession)"), headers: .bearer(alice.accessToken.token)
            ) { response in #expect(response.status == .notFound) }
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(bob.accessToken.token)) {
                response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func jwksPublishesTheSigningKey() async throws {
        try await withTestApp { app in
            try await app.testing().test(.GET, API.Operations.jwks.path()) { response in
                #expect(response.status == .ok)
                let text = response.body.string
                #expect(
                    text.contains(#""kty":"EC""#) && text.contains(#""crv":"P-256""#)
                        && text.contains(#""alg":"ES256""#))
            }
        }
    }
}
