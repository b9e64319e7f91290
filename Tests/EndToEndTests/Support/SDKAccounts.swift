import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// Accounts made through the SDK: an authenticator app with backup codes, and a code the server would refuse.
enum SDKAccounts {
    /// `name` (password only) signed in on a new session manager for `client`, registered first
    /// unless `register` is false: another device of the same account, each time it is called.
    static func signedIn(_ client: APIClient, _ name: String, register: Bool = true) async throws -> SessionManager {
        if register { try await ClientAccounts.register(client, name) }
        let session = SessionManager(client: client, store: MemoryTokenStore())
        await session.signedIn(try await ClientAccounts.signIn(client, name))
        return session
    }

    /// An account with an authenticator app: its secret and backup codes.
    static func accountWithTOTP(_ client: APIClient, _ name: String) async throws -> ([UInt8], [String]) {
        try await ClientAccounts.register(client, name)
        let token = try await ClientAccounts.signIn(client, name).accessToken.token
        let (secret, codes) = try await ClientAccounts.enableAuthenticator(client, token: token, at: Date())
        return (secret, try #require(codes))
    }

    /// A six-digit code that is none of the codes the server would take now.
    static func wrongCode(_ secret: [UInt8]) throws -> String {
        let totp = try TOTP(secret: secret)
        let near = try (-2...2).map { try totp.code(at: Date().addingTimeInterval(TimeInterval($0 * 30))) }
        return (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { !near.contains($0) } ?? "000000"
    }
}
