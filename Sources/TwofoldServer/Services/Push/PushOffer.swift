import Foundation
import TwofoldAPI

/// Whether "Approve on your phone" is offered to an account now (issue Z item 3, against prompt
/// bombing): not after `pushPerHour` requests in the last hour, which a stranger with the
/// password can spend but not exceed, and not for `pushPause` after `pushDenialsToPause`
/// refusals in a row on the phone. Codes and passkeys are offered either way.
struct PushOffer: Sendable {
    let store: any PushApprovalStore
    let clock: ServerClock
    let rules: ProductRules

    /// Whether a new request may be made for `userID` (who has a device key).
    func isOffered(to userID: UUID) async throws -> Bool {
        let now = clock.now()
        guard
            try await store.made(userID: userID, since: now.addingTimeInterval(-Self.budgetWindow)) < rules.pushPerHour
        else { return false }
        return try await pausedUntil(userID: userID, now: now) == nil
    }

    /// Until when the phone's answers turned push off for `userID`, if they did: the last
    /// `pushDenialsToPause` decisions all refused, or the last one picked a number the screen did
    /// not show (whoever tapped was not looking at the screen that asked: with three numbers, a
    /// blind tap is right one time in three, so a stranger gets one such try, not three), the
    /// latest less than `pushPause` ago.
    func pausedUntil(userID: UUID, now: Date) async throws -> Date? {
        let recent = try await store.decisions(userID: userID, limit: rules.pushDenialsToPause)
        guard let latest = recent.first,
            latest.status == .wrongNumber
                || (recent.count == rules.pushDenialsToPause && recent.allSatisfy { Self.refusals.contains($0.status) })
        else { return nil }
        let until = latest.at.addingTimeInterval(rules.pushPause)
        return until > now ? until : nil
    }

    /// The window the budget counts requests over.
    static let budgetWindow: TimeInterval = 3600
    /// The phone's answers that count as refusals in a row.
    static let refusals: Set<PushStatus> = [.denied, .wrongNumber, .reported]
}
