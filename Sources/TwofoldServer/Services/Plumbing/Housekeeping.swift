import Foundation

/// Deletes state that has outlived its purpose: pending TOTP secrets never confirmed within 10
/// minutes (seed 000), finished or expired login flows, expired refresh tokens (used ones too: see
/// `SessionStore.deleteExpiredRefreshTokens`), idle rate-limit buckets, wrong-code records older
/// than the 24-hour rule needs, and device-key challenges a day after they expired (until then a
/// late signature is told "expired", not "unknown"), and passkey challenges likewise; the
/// answers kept for `Idempotency-Key`s once their 24 hours are over; the documents of recovery
/// requests that closed or ran out of time; emailed links a day after they expired. It also closes a factor reset cut short (its claim
/// ran out with the account's `SessionEpoch` odd, so no sign-in would start again), and audits
/// it for an administrator to run the reset again. Runs every minute on each instance; every
/// statement is idempotent, so instances never conflict. Each statement reads an index on the time
/// it deletes by (`CreateExpiryIndexes`), so a sweep costs what it deletes.
struct Housekeeping: Sendable {
    let idempotency: any IdempotencyStore
    let totp: any TOTPCredentialStore
    let loginFlows: any LoginFlowStore
    let sessions: any SessionStore
    let rateLimits: any RateLimitStore
    let guards: any FactorGuardStore
    let devices: any DeviceStore
    let passkeys: any PasskeyStore
    let recovery: any RecoveryStore
    let emailLinks: any EmailLinkStore
    /// Kept a day past their expiry: the budget and a run of refusals are counted from them.
    let pushApprovals: any PushApprovalStore
    let phones: any PhoneChannelStore
    let audit: Auditor

    func sweep(now: Date) async throws {
        let day = now.addingTimeInterval(-24 * 3600)
        try await totp.deleteExpiredPending(now: now)
        try await loginFlows.deleteExpired(before: day)
        try await sessions.deleteExpiredRefreshTokens(now: now)
        try await rateLimits.deleteIdle(before: day)
        try await guards.deleteFailures(before: day)
        try await devices.deleteChallenges(expiredBefore: day)
        try await passkeys.deleteChallenges(expiredBefore: day)
        try await idempotency.deleteExpired(before: now)
        try await emailLinks.deleteExpired(before: day)
        try await pushApprovals.deleteEnded(before: day)
        try await phones.deleteNotices(before: now.addingTimeInterval(-7 * 24 * 3600))
        try await phones.deleteChecks(before: day)
        _ = try await recovery.deleteStaleDocuments(now: now)
        for userID in try await sessions.closeAbandonedResets(now: now) {
            try await audit.record(
                .resetInterrupted, user: userID,
                detail: "a reset of the sign-in methods was cut short; sign-ins start again: run it again",
                origin: .none)
        }
    }
}
