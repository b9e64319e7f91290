import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore

/// Accounts as every suite makes them, through the SDK's typed client: in process (the server's
/// tests, `app.client(from:)`) or over a socket (the built server's, `ServerProcess.client`).
/// Named by what they make; each target's `Support/` builds on them.
public enum ClientAccounts {
    /// The password every test account has.
    public static let password = "correct horse battery staple"

    /// A sign-in that asked for a second step where the test expected the password to be enough.
    public struct SecondStepAsked: Error, CustomStringConvertible {
        public let name: String
        public init(name: String) { self.name = name }
        public var description: String { "\(name)'s sign-in asked for a second step" }
    }

    /// Registers `name` (`<name>@example.com`, `password`).
    @discardableResult
    public static func register(_ client: APIClient, _ name: String) async throws -> RegisterResponse {
        try await client.send(
            API.Auth.register, RegisterRequest(username: name, email: "\(name)@example.com", password: password))
    }

    /// Signs `name` in with the password alone: the session's tokens. Throws `SecondStepAsked`
    /// when the account asks for more.
    public static func signIn(_ client: APIClient, _ name: String) async throws -> AuthTokensResponse {
        let outcome = try await client.send(
            API.Auth.login, LoginRequest(email: "\(name)@example.com", password: password))
        guard case .signedIn(let tokens) = outcome else { throw SecondStepAsked(name: name) }
        return tokens
    }

    /// Turns on an authenticator app on the session of `token`, confirmed with the code of
    /// `now`: its secret and the backup codes the first factor hands out (none when it is not
    /// the account's first).
    public static func enableAuthenticator(_ client: APIClient, token: String, at now: Date) async throws
        -> (secret: [UInt8], backupCodes: [String]?)
    {
        let setup = try await client.send(API.TwoFactor.totpSetup, bearer: token)
        let secret = try Base32.decode(setup.secret)
        let enabled = try await client.send(
            API.TwoFactor.totpVerify, CodeRequest(code: try TOTP(secret: secret).code(at: now)), bearer: token)
        return (secret, enabled.backupCodes)
    }
}
