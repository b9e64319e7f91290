import Foundation

/// How often one user's ceremonies may be asked for a challenge (passkey options, device-key
/// challenges; issue T): every one is a row written, so a session or a login flow cannot fill
/// the database with them. One bucket per user, shared by every kind of challenge.
struct ChallengeThrottle: Sendable {
    let rateLimiter: RateLimiter
    let rule: RateLimiter.Rule
    let clock: ServerClock

    /// Takes a token from `userID`'s bucket, or throws `429` with when to try again.
    func require(userID: UUID) async throws {
        try await rateLimiter.require("challenges:\(userID.uuidString)", rule: rule, now: clock.now())
    }
}
