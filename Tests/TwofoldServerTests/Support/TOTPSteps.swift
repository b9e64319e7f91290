import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import VaporTesting

/// Helpers for tests that enable an authenticator app and sign in with it.
enum TOTPSteps {
    /// Sets up and confirms TOTP for the signed-in user; returns the secret and backup codes.
    static func enable(_ app: Application, tokens: AuthTokensResponse, clock: TestClock) async throws
        -> (secret: [UInt8], backupCodes: [String])
    {
        var setup: TOTPSetupResponse?
        try await app.testing().test(.POST, API.TwoFactor.totpSetup.path(), headers: .bearer(tokens.accessToken.token))
        {
            response in
            #expect(response.status == .ok)
            setup = try response.decode(TOTPSetupResponse.self)
        }
        let secret = try Base32.decode(try #require(setup).secret)
        var enabled: FactorEnabledResponse?
        try await app.testing().test(
            .POST, API.TwoFactor.totpVerify.path(), headers: .bearer(tokens.accessToken.token),
            body: json(["code": try code(secret, clock)])
        ) { response in
            #expect(response.status == .ok)
            enabled = try response.decode(FactorEnabledResponse.self)
        }
        // Move to the next time step so the confirming code's step is not reused by accident.
        clock.advance(by: 30)
        return (secret, try #require(enabled?.backupCodes))
    }

    static func code(_ secret: [UInt8], _ clock: TestClock, offset: TimeInterval = 0) throws -> String {
        try TOTP(secret: secret).code(at: clock.now.addingTimeInterval(offset))
    }

    /// A session other than the one that enabled TOTP (a factor added in a session never steps
    /// that session up), signed in with the password and a code, then left 6 minutes so that
    /// its second factor is no longer recent; returns its access token.
    static func laterSession(
        _ app: Application, secret: [UInt8], clock: TestClock, _ name: String = "alice", waits: Bool = true
    ) async throws -> String {
        let flow = try await startLogin(app, name)
        var token: String?
        try await app.testing().test(
            .POST, API.SecondStep.validateTOTP.path(), headers: jsonHeaders,
            body: json(["tempToken": flow, "code": try code(secret, clock)])
        ) { response in
            #expect(response.status == .ok)
            token = try response.decode(SecondStepResponse.self).accessToken.token
        }
        if waits { clock.advance(by: 6 * 60) }
        return try #require(token)
    }

    /// Logs in with the password and returns the login flow token.
    static func startLogin(_ app: Application, _ name: String = "alice", from address: String = "10.0.0.1")
        async throws -> String
    {
        var challenge: LoginChallengeResponse?
        try await app.testing().test(
            .POST, API.Auth.login.path(), headers: .client(address),
            body: json(["username": name, "password": Accounts.password])
        ) { response in
            #expect(response.status == .ok)
            challenge = try response.decode(LoginChallengeResponse.self)
        }
        return try #require(challenge).otpFlowId
    }

    /// Submits a TOTP code for a flow; returns the status and, on failure, the problem.
    static func validate(_ app: Application, flow: String, code: String) async throws -> (UInt, ProblemBody?) {
        var result: (UInt, ProblemBody?) = (0, nil)
        try await app.testing().test(
            .POST, API.SecondStep.validateTOTP.path(), headers: jsonHeaders,
            body: json(["tempToken": flow, "code": code])
        ) { response in
            result = (response.status.code, response.status == .ok ? nil : try response.problem())
        }
        return result
    }
}
