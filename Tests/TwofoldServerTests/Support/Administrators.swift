import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// Administrators as the tests make them: made, signed in with their authenticator app, stepped up.
enum Administrators {
    /// Makes `alice` an administrator as `admin create` does (the role, and an authenticator app
    /// active at once), then signs her in with the password and a code from that app.
    static func adminTokens(_ app: Application) async throws -> AuthTokensResponse {
        _ = try await Accounts.signUp(app, "alice")
        try await app.twofold.database.run(Statement("UPDATE users SET role = 'admin' WHERE username = 'alice'"))
        let alice = try #require(try await app.twofold.users.named("alice"))
        _ = try await app.twofold.totp.enableForNewAccount(userID: alice.id, account: alice.email)
        return try await signIn(app, "alice")
    }

    /// Signs in `name` (registering it first as the administrator `alice` when asked): the
    /// password, then a code from the authenticator app when the account has one.
    static func signIn(_ app: Application, _ name: String, register: Bool = false) async throws -> AuthTokensResponse {
        if register { return try await adminTokens(app) }
        var tokens: AuthTokensResponse?
        var challenge: LoginChallengeResponse?
        try await app.testing().test(
            .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
            body: json(["username": name, "password": Accounts.password])
        ) { response in
            #expect(response.status == .ok)
            tokens = try? response.decode(AuthTokensResponse.self)
            challenge = try? response.decode(LoginChallengeResponse.self)
        }
        if let tokens { return tokens }
        try await app.testing().test(
            .POST, API.SecondStep.validateTOTP.path(), headers: .client("10.0.0.1"),
            body: json(["tempToken": try #require(challenge).otpFlowId, "code": try await freshCode(app, name)])
        ) { response in
            #expect(response.status == .ok)
            let answer = try response.decode(SecondStepResponse.self)
            tokens = AuthTokensResponse(
                accessToken: answer.accessToken, refreshToken: answer.refreshToken, user: answer.user)
        }
        return try #require(tokens)
    }

    /// Steps the session of `token` up with a code from `name`'s authenticator app (an
    /// administrator's second factor, `POST /auth/step-up`); the new access token.
    static func stepUp(_ app: Application, token: String, _ name: String = "alice") async throws -> String {
        var stepped: StepUpResponse?
        try await app.testing().test(
            .POST, API.Auth.stepUp.path(), headers: .bearer(token),
            body: json(["method": "totp", "code": try await freshCode(app, name)])
        ) { response in
            #expect(response.status == .ok)
            stepped = try response.decode(StepUpResponse.self)
        }
        return try #require(stepped).accessToken.token
    }

    /// A code from `name`'s authenticator app at a time step not used yet (now, or the next,
    /// which the server's drift window takes), read from the server's own secret.
    static func freshCode(_ app: Application, _ name: String) async throws -> String {
        let user = try #require(try await app.twofold.users.named(name))
        let credential = try #require(try await app.twofold.totp.active(for: user.id))
        let secret = try app.twofold.totp.secrets.open(credential.secretCiphertext, boundTo: user.id)
        let now = app.twofold.clock.now()
        let step = Int64(now.timeIntervalSince1970) / 30
        let offset: TimeInterval = (credential.lastUsedStep ?? 0) >= step ? 30 : 0
        return try TOTP(secret: secret).code(at: now.addingTimeInterval(offset))
    }
}
