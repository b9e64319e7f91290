import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldServer
import TwofoldTestSupport
import VaporTesting

/// Register → login → an authenticated call → refresh → logout, and what each refuses.
@Suite struct AuthFlowTests {
    @Test func registerLoginCallRefreshLogout() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            #expect(tokens.user.username == "alice")
            #expect(tokens.accessToken.expiresAt.timeIntervalSince(Date(timeIntervalSince1970: 1_800_000_000)) == 900)
            let client = app.client()
            #expect(
                try await client.send(API.Account.show, bearer: tokens.accessToken.token).email == "alice@example.com")

            let pair = try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
            #expect(pair.refreshToken.token != tokens.refreshToken.token)
            #expect(
                try await client.send(API.Auth.logout, RefreshRequest(refreshToken: pair.refreshToken.token)).success)

            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: pair.accessToken.token) }.status
                    == 401)
            #expect(
                try await refusal {
                    try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: pair.refreshToken.token))
                }.status == 401)
        }
    }

    @Test func loginByUsernameWorksAndCaseDoesNotMatter() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let outcome = try await app.client(from: "10.0.0.2").send(
                API.Auth.login, LoginRequest(username: "ALICE", password: Accounts.password))
            guard case .signedIn(let tokens) = outcome else { throw ClientAccounts.SecondStepAsked(name: "alice") }
            #expect(tokens.user.username == "alice")
        }
    }

    /// Each name field given must be a name, whichever counts; spaces and tabs around a name do
    /// not matter. What the OpenAPI document says of `LoginRequest` (schemathesis found a blank
    /// `username` beside an `email` accepted).
    @Test func everyNameFieldGivenToLoginMustBeAName() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let client = app.client(from: "10.0.0.4")
            let refused: [(String, String?, String)] = [
                ("alice@example.com", "", "username"), ("alice@example.com", " \t", "username"),
                ("", "alice", "email"), (String(repeating: "a", count: 255), nil, "email"),
            ]
            for (email, username, field) in refused {
                let body = LoginRequest(email: email, username: username, password: Accounts.password)
                let refused = try await refusal { try await client.send(API.Auth.login, body) }
                #expect(refused.status == 422, "\(body)")
                #expect(refused.problem?.errors?[field] != nil, "\(body)")
            }
            let nameless = try await refusal {
                try await client.send(API.Auth.login, LoginRequest(password: Accounts.password))
            }
            #expect(nameless.status == 422)
            #expect(nameless.problem?.errors?["email"] == "is required, or username in its place")
            let outcome = try await client.send(
                API.Auth.login, LoginRequest(username: " alice\t", password: Accounts.password))
            guard case .signedIn = outcome else { throw ClientAccounts.SecondStepAsked(name: "alice") }
        }
    }

    @Test func wrongPasswordAndUnknownUserLookTheSame() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            for body in [
                LoginRequest(email: "alice@example.com", password: "wrong password"),
                LoginRequest(email: "nobody@example.com", password: Accounts.password),
            ] {
                let refused = try await refusal { try await app.client(from: "10.0.0.3").send(API.Auth.login, body) }
                #expect(refused.status == 401)
                #expect(refused.code == .invalidCredentials)
                #expect(refused.problem?.detail == "The email, username or password is wrong.")
            }
        }
    }

    @Test func accessTokensExpireAfterFifteenMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            clock.advance(by: 14 * 60)
            _ = try await client.send(API.Account.show, bearer: tokens.accessToken.token)
            clock.advance(by: 61)
            let refused = try await refusal {
                try await client.send(API.Account.show, bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 401)
            try #require(refused.code == .unauthorized)
        }
    }

    @Test func aRefreshTokenExpiresAfterThirtyDaysUnused() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            clock.advance(by: 30 * 24 * 3600)
            let refused = try await refusal {
                try await app.client().send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
            }
            #expect(refused.status == 401)
            #expect(refused.code == .expired)
        }
    }

    @Test func garbageBearerTokensAreUnauthorized() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            var tampered = Array(tokens.accessToken.token)
            tampered[tampered.count / 2] = tampered[tampered.count / 2] == "A" ? "B" : "A"
            for token in ["", "abc", "a.b.c", String(tampered)] {
                #expect(
                    try await refusal { try await client.send(API.Account.show, bearer: token) }.status == 401,
                    "\(token)")
            }
            #expect(try await refusal { try await client.send(API.Account.show) }.status == 401)
        }
    }

    @Test func reusedRefreshTokenRevokesTheFamilyAndIsAudited() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            let first = RefreshRequest(refreshToken: tokens.refreshToken.token)
            let second = try await client.send(API.Auth.refresh, first)
            // The first token again: theft. The whole family dies, including the newest token.
            #expect(try await refusal { try await client.send(API.Auth.refresh, first) }.status == 401)
            #expect(
                try await refusal {
                    try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: second.refreshToken.token))
                }.status == 401)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: second.accessToken.token) }.status
                    == 401)
            let reuses = try await AuditQueries.count(type: "token.refresh_reused", on: app)
            #expect(reuses == 1)
        }
    }

    @Test(.tags(.database)) func twentyParallelRefreshesWithOneTokenGiveExactlyOneSuccess() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await status {
                            try await client.send(
                                API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 401 }.count == 19)
            try #require(try await AuditQueries.count(type: "token.refresh_reused", on: app) == 1)
            let refused = try await refusal {
                try await client.send(API.Account.show, bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 401, "the family is revoked")
        }
    }

    @Test func sessionsAreListedAndRevokedOneByOneOrAll() async throws {
        try await withTestApp { app in
            let first = try await Accounts.signUp(app)
            let outcome = try await app.client(from: "10.0.0.9").send(
                API.Auth.login, LoginRequest(email: "alice@example.com", password: Accounts.password))
            guard case .signedIn(let other) = outcome else { throw ClientAccounts.SecondStepAsked(name: "alice") }
            let client = app.client()

            let sessions = try await client.send(API.Auth.sessions, bearer: first.accessToken.token).sessions
            #expect(sessions.count == 2)
            #expect(sessions.filter(\.current).count == 1)
            let otherID = try #require(sessions.first { !$0.current }).id

            _ = try await client.send(API.Auth.revokeSession, "\(otherID)", bearer: first.accessToken.token)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: other.accessToken.token) }.status
                    == 401)
            _ = try await client.send(API.Auth.logoutAll, bearer: first.accessToken.token)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: first.accessToken.token) }.status
                    == 401)
        }
    }

    @Test func aSessionOfAnotherUserCannotBeRevoked() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice")
            let bob = try await Accounts.signUp(app, "bob")
            let client = app.client()
            let bobSession = try #require(
                try await client.send(API.Auth.sessions, bearer: bob.accessToken.token).sessions.first
            ).id
            let refused = try await refusal {
                try await client.send(API.Auth.revokeSession, "\(bobSession)", bearer: alice.accessToken.token)
            }
            #expect(refused.status == 404)
            _ = try await client.send(API.Account.show, bearer: bob.accessToken.token)
        }
    }

    @Test func jwksPublishesTheSigningKey() async throws {
        try await withTestApp { app in
            let key = try #require(try await app.client().send(API.Operations.jwks).keys.first)
            #expect(key.kty == "EC" && key.crv == "P-256" && key.alg == "ES256")
            #expect(Base64URL.decode(key.x)?.count == 32 && Base64URL.decode(key.y)?.count == 32)
        }
    }
}
