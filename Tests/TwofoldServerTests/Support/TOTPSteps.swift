import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport
import VaporTesting

/// Helpers for tests that enable an authenticator app and sign in with it.
enum TOTPSteps {
    /// Sets up and confirms TOTP for the signed-in user; returns the secret and backup codes.
    static func enable(_ app: Application, tokens: AuthTokensResponse, clock: TestClock) async throws
        -> (secret: [UInt8], backupCodes: [String])
    {
        let (secret, codes) = try await ClientAccounts.enableAuthenticator(
            app.client(), token: tokens.accessToken.token, at: clock.now)
        // Move to the next time step so the confirming code's step is not reused by accident.
        clock.advance(by: 30)
        return (secret, try #require(codes))
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
        let token = try await app.client().send(
            API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: flow, code: try code(secret, clock))
        ).accessToken.token
        if waits { clock.advance(by: 6 * 60) }
        return token
    }

    /// Logs in with the password and returns the login flow token.
    static func startLogin(_ app: Application, _ name: String = "alice", from address: String = "10.0.0.1")
        async throws -> String
    {
        let outcome = try await app.client(from: address).send(
            API.Auth.login, LoginRequest(username: name, password: Accounts.password))
        let challenge: LoginChallengeResponse? =
            if case .secondStep(let challenge) = outcome { challenge } else { nil }
        return try #require(challenge, "\(name) signed in with the password alone").otpFlowId
    }

    /// Submits a TOTP code for a flow; returns the status and, on failure, the problem.
    static func validate(_ app: Application, flow: String, code: String) async throws -> (UInt, ProblemBody?) {
        do {
            _ = try await app.client().send(
                API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: flow, code: code))
            return (200, nil)
        } catch let refused as APIError {
            return (UInt(refused.status), try Accounts.problem(refused))
        }
    }
}
