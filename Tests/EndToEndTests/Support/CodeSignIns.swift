import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// Sign-ins with a code by text message or email, on the database asked for.
enum CodeSignIns {
    static let phone = "+14155550199"

    /// The server's database settings for `database`, or `nil` when PostgreSQL is not available.
    static func databaseEnvironment(_ database: String) -> [String: String]? {
        guard database == "postgres" else { return [:] }
        return TestAccounts.postgresURL().map { ["DATABASE_URL": $0] }
    }

    /// Login with the password, then the code that `received` yields once it arrives.
    static func signInWithCode(
        _ server: ServerProcess, as name: String, code: () async throws -> String?
    ) async throws -> (LoginChallengeResponse, SecondStepResponse) {
        let challenge = try await server.client.send(
            API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
        ).challenge
        let sent = try #require(try await code(), "no code arrived")
        let verified = try await server.client.send(
            API.SecondStep.verifyOTP, OTPVerifyRequest(otpFlowId: challenge.otpFlowId, code: sent))
        return (challenge, verified)
    }
}
