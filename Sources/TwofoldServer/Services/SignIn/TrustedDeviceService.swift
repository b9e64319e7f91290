import Foundation
import TwofoldAPI

/// Remembered devices (seed 002): after a second step with `trustDevice`, the device gets a token
/// (also as a secure, HTTP-only cookie) that lets `POST /auth/login` skip the second step for that
/// user for 30 days (`ProductRules.trustedDeviceLifetime`), until it is revoked.
///
/// Built with what it uses (its store, the audit log, the clock, the lifetime) and given values,
/// never a request: it is tested with in-memory stores, without Vapor.
struct TrustedDeviceService: Sendable {
    static let header = Wire.Header.trustedDevice

    let store: any TrustedDeviceStore
    let audit: Auditor
    let clock: ServerClock
    let lifetime: TimeInterval

    /// Remembers a device of `userID` named after its `User-Agent`, for a sign-in that read the
    /// account's `SessionEpoch` `epoch` before checking anything; returns the token to hand to it.
    func remember(userID: UUID, epoch: Int, origin: RequestOrigin) async throws -> String {
        let now = clock.now()
        let token = SecureToken.generate()
        let name = origin.userAgent.map { String($0.prefix(120)) } ?? "Unknown device"
        try await store.insert(
            TrustedDeviceRecord(
                id: SecureRandom.timeOrderedUUID(at: now), userID: userID, tokenHash: SecureToken.hash(token),
                name: name, createdAt: now, expiresAt: now.addingTimeInterval(lifetime), epoch: epoch))
        try await audit.record(.trustedDeviceAdded, user: userID, detail: name, origin: origin)
        return token
    }

    /// Whether `token` (from the header or the cookie) is a live remembered device of `userID`;
    /// marks it used.
    func recognises(userID: UUID, token: String?) async throws -> Bool {
        guard let token, !token.isEmpty, token.count <= 128 else { return false }
        return try await store.markUsed(tokenHash: SecureToken.hash(token), userID: userID, now: clock.now())
    }

    /// The user's live remembered devices, newest first.
    func list(userID: UUID) async throws -> [TrustedDeviceDTO] {
        try await store.live(userID: userID, now: clock.now()).map {
            TrustedDeviceDTO(
                id: $0.id, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, expiresAt: $0.expiresAt)
        }
    }

    /// Revokes one remembered device of `userID`; `404` when it has none by that id still live.
    func revoke(id: UUID, userID: UUID, origin: RequestOrigin) async throws {
        guard let name = try await store.revoke(id: id, userID: userID, now: clock.now()) else {
            throw Problem(status: 404, code: .notFound, title: "No such remembered device")
        }
        try await audit.record(.trustedDeviceRevoked, user: userID, detail: name, origin: origin)
    }

    /// Revokes every remembered device of a user (password change, second factors reset).
    func revokeAll(userID: UUID, origin: RequestOrigin) async throws {
        let revoked = try await store.revokeAll(userID: userID, now: clock.now())
        if revoked > 0 {
            try await audit.record(
                .trustedDeviceRevoked, user: userID, detail: "all \(revoked) remembered devices", origin: origin)
        }
    }
}
