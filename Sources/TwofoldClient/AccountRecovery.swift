import Foundation
import TwofoldAPI

/// Account recovery when every factor is lost (seed 000's last step): a request with the
/// account's email address and what the person wants the reviewer to know, the code sent to that
/// address, the request's state while an administrator reviews it, and the single-use pass the
/// approval sends, which signs in once (the session then sets up a factor before anything else).
public struct AccountRecovery: Sendable {
    /// The client the requests go through.
    public let client: APIClient

    /// Recovery through `client`.
    public init(client: APIClient) { self.client = client }

    /// Starts a request for the account with `email`; answered alike whether or not one has it.
    public func start(email: String, message: String?, document: RecoveryDocument? = nil) async throws
        -> RecoveryStatus
    {
        try await client.send(
            API.Recovery.start, RecoveryStartRequest(email: email, message: message, document: document))
    }

    /// The code sent to the account's email address: the request then waits for review.
    public func verify(_ id: UUID, code: String) async throws -> RecoveryStatus {
        try await client.send(API.Recovery.verifyEmail, id.uuidString, CodeRequest(code: code))
    }

    /// Where the request stands now.
    public func status(_ id: UUID) async throws -> RecoveryStatus {
        try await client.send(API.Recovery.status, id.uuidString)
    }

    /// Uses the approved pass: the session (kept by `session`) may only set up a factor at first.
    public func redeem(pass: String, into session: SessionManager) async throws -> UserDTO {
        let tokens = try await client.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
        await session.signedIn(tokens)
        return tokens.user
    }
}
