import Foundation
import TwofoldAPI

/// Signing out, as a use case: one session (by its refresh token, or one of the caller's by
/// id), or everything (every session and remembered device; the owner is told what still signs
/// in without the password, issue T item 3).
struct SignOut: Sendable {
    let audit: Auditor
    let sessions: SessionService
    let trustedDevices: TrustedDeviceService
    let policy: SignInPolicy
    let factorChanges: FactorChanges

    /// Ends the session `refreshToken` belongs to. Signing out twice is not an error.
    func session(refreshToken: String, origin: RequestOrigin) async throws {
        try await sessions.logout(refreshToken: refreshToken, origin: origin)
    }

    /// Ends one of the caller's sessions (`id`, `nil` when the path named none).
    func session(_ id: UUID?, user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws {
        try await policy.require(.signOut, caller: caller, user: user)
        guard let id else { throw Problem(status: 404, code: .notFound, title: "No such session") }
        try await sessions.revoke(sessionID: id, ofUser: caller.userID, reason: "revoked_by_user", origin: origin)
    }

    /// Every session, the caller's included, and every remembered device.
    func everywhere(user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws {
        try await policy.require(.signOut, caller: caller, user: user)
        let count = try await sessions.revokeAll(userID: caller.userID, reason: "logout_all")
        try await trustedDevices.revokeAll(userID: caller.userID, origin: origin)
        try await audit.record(.allSessionsRevoked, user: caller.userID, detail: "\(count) sessions", origin: origin)
        try await factorChanges.notify(
            user, subject: "You were signed out everywhere",
            body: "Twofold: every session of your account was signed out and your remembered devices forgotten. "
                + (try await factorChanges.withoutPassword(userID: user.id)))
    }
}
