import Fluent
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
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
        let client = app.client(from: "10.0.0.1")
        let outcome = try await client.send(API.Auth.login, LoginRequest(username: name, password: Accounts.password))
        let flow: LoginChallengeResponse
        switch outcome {
        case .signedIn(let tokens): return tokens
        case .secondStep(let challenge): flow = challenge
        }
        let answer = try await client.send(
            API.SecondStep.validateTOTP,
            TOTPValidateRequest(tempToken: flow.otpFlowId, code: try await freshCode(app, name)))
        return AuthTokensResponse(accessToken: answer.accessToken, refreshToken: answer.refreshToken, user: answer.user)
    }

    /// Steps the session of `token` up with a code from `name`'s authenticator app (an
    /// administrator's second factor, `POST /auth/step-up`); the new access token.
    static func stepUp(_ app: Application, token: String, _ name: String = "alice") async throws -> String {
        try await app.client().send(
            API.Auth.stepUp, StepUpRequest(method: .totp, code: try await freshCode(app, name)), bearer: token
        ).accessToken.token
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
