import Foundation
import TwofoldAPI

/// Wrong-code limits per user and factor (seed 000, seed 002; the numbers are `ProductRules`'
/// defaults): 5 consecutive wrong codes lock that factor for 5 minutes, each further lockout
/// doubles the time (up to a day), and 20 wrong codes in 24 hours lock the account until an
/// admin unlocks it. The count belongs to the user and factor, not to a login flow, so starting
/// a new flow does not reset it (Keycloak #26180).
///
/// An attempt takes a slot *before* its code is checked, with one conditional update, so however
/// many requests race, at most 5 codes are ever evaluated before the lock.
struct FactorGuard: Sendable {
    let store: any FactorGuardStore
    let users: any UserStore
    let sessions: SessionService
    let audit: Auditor
    let clock: ServerClock
    let rules: ProductRules

    /// The user's factors that are locked now, each with the time its lock ends (an
    /// administrator's view of the account).
    func lockouts(userID: UUID) async throws -> [(factor: FactorMethod, until: Date)] {
        let now = clock.now()
        var locked: [(factor: FactorMethod, until: Date)] = []
        for factor in FactorMethod.secondFactors {
            if let until = try await store.state(userID: userID, factor: factor.rawValue)?.lockedUntil, until > now {
                locked.append((factor, until))
            }
        }
        return locked
    }

    /// Takes an attempt slot for `factor`, or throws `429 locked` with `lockoutUntil`.
    ///
    /// `waiting` (a signed-in step-up, never inside a unit of work, whose thread the checks it
    /// waits for need): when every slot is taken by codes still being checked and the factor is
    /// not locked, waits for those checks (issue V item 9) — they end in a success (a copy of
    /// the same code then hears `409 already_used`), in a lock (it hears `locked`, which is then
    /// true), or give their slots back. Never answers `locked` for a factor that is not locked:
    /// after 5 seconds of checks still in flight it asks the client to try again in a moment.
    func begin(_ factor: String, userID: UUID, waiting: Bool = false) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        let limit = rules.lockAfterFailures
        while true {
            let now = clock.now()
            if try await store.takeSlot(userID: userID, factor: factor, limit: limit, now: now) { return }
            var state = try await store.state(userID: userID, factor: factor)
            if let lockedUntil = state?.lockedUntil, lockedUntil > now {
                throw Self.locked(until: lockedUntil, now: now)
            }
            guard waiting else { throw refused(lockedUntil: state?.lockedUntil, now: now) }
            // Waits reading, not writing, until a slot may be free again (a read costs the
            // single writer nothing), and no longer than 5 seconds of the wall clock.
            repeat {
                guard ContinuousClock.now < deadline else { throw Self.checksInFlight }
                try await Task.sleep(for: .milliseconds(20))
                state = try await store.state(userID: userID, factor: factor)
            } while state.map { $0.lockedUntil == nil && $0.attempts >= limit } ?? false
        }
    }

    /// A right code sent twice at once: its copy gives its slot back (it guessed nothing).
    func giveBack(_ factor: String, userID: UUID) async throws {
        try await store.giveBack(userID: userID, factor: factor)
    }

    /// Codes for the factor are being checked in parallel and none has finished in 5 seconds.
    static let checksInFlight = Problem(
        status: 503, code: .serviceUnavailable, title: "Codes being checked",
        detail: "Other codes for this method are being checked right now; try again in a moment.", retryAfter: 1)

    /// Throws `429 locked` as `begin` would, without taking a slot: for a code already judged
    /// right before its unit of work (an authenticator app's), whose verdict may be told only
    /// while the factor is not locked. A right code ends the count (`succeeded`), so the slot
    /// `begin` would take is given back at once: reading instead writes nothing for a user with
    /// no wrong codes to forget, as on most sign-ins. Answers whether there is a count to forget
    /// (`succeeded` is then due once the code is accepted).
    func admit(_ factor: String, userID: UUID) async throws -> Bool {
        let now = clock.now()
        guard let guarded = try await store.state(userID: userID, factor: factor) else { return false }
        guard Self.isOpen(guarded, limit: rules.lockAfterFailures, now: now) else {
            throw refused(lockedUntil: guarded.lockedUntil, now: now)
        }
        return guarded.attempts != 0 || guarded.lockouts != 0 || guarded.lockedUntil != nil
    }

    /// Whether a factor in `state` takes a code at `now`: not locked with a slot left of
    /// `limit`, or the lock run out. The same rule is written in SQL for the statements that
    /// claim a slot (`SQLFactorGuardStore.closed`); `FactorGuardAgreementTests` checks the two agree.
    static func isOpen(_ state: FactorGuardState, limit: Int, now: Date) -> Bool {
        state.lockedUntil.map { $0 <= now } ?? (state.attempts < limit)
    }

    /// The code was right: the consecutive count starts again.
    func succeeded(_ factor: String, userID: UUID) async throws {
        try await store.clear(userID: userID, factor: factor)
    }

    /// The code was wrong: records it, locks the factor at the fifth in a row and the account at
    /// the twentieth in a day, and throws the problem to answer (`invalid_code` with
    /// `attemptsRemaining`, `locked`, or `account_locked`).
    ///
    /// `countsTowardAccount` is `false` for a factor a stranger can try with nothing but a
    /// username (seed 004's SMS and device-key sign-in): its wrong codes lock that factor, never
    /// the account, or anyone could lock anyone out (issue S item 3).
    func failed(_ factor: String, userID: UUID, countsTowardAccount: Bool = true, origin: RequestOrigin)
        async throws -> Never
    {
        let now = clock.now()
        if countsTowardAccount {
            try await store.recordFailure(
                id: SecureRandom.timeOrderedUUID(at: now), userID: userID, factor: factor, at: now)
        }
        let tally = try await store.tally(
            userID: userID, factor: factor, since: now.addingTimeInterval(-Self.accountDay))
        if countsTowardAccount, tally.failures >= rules.accountLockFailures {
            try await lockAccount(userID: userID, now: now, origin: origin)
        }

        // Fail closed: a guard row that cannot be read counts as the last attempt.
        let maximumAttempts = rules.lockAfterFailures
        let attempts = tally.attempts ?? maximumAttempts
        let lockouts = tally.lockouts ?? 0
        guard attempts >= maximumAttempts else { throw wrongCode(attempts: attempts) }
        // An anonymous sign-in's lock does not grow (issue T): strangers set it, and it must not
        // grow into a long lock of the owner's way in.
        let duration =
            countsTowardAccount
            ? min(rules.longestLockout, rules.firstLockout * pow(2, Double(lockouts))) : rules.firstLockout
        let until = now.addingTimeInterval(duration)
        if try await store.lock(userID: userID, factor: factor, until: until, limit: maximumAttempts) {
            try await audit.record(
                .lockout, user: userID, detail: "\(factor) locked for \(Int(duration / 60)) minutes", origin: origin)
        }
        throw Self.locked(until: until, now: now)
    }

    /// The span over which a user's wrong codes count toward the account's lock.
    static let accountDay: TimeInterval = 24 * 3600

    /// A wrong code that locked nothing, with `attempts` of the factor's slots used.
    func wrongCode(attempts: Int) -> Problem {
        Problem(
            status: 401, code: .invalidCode, title: "Wrong code", detail: "That code is not right.",
            attemptsRemaining: rules.lockAfterFailures - attempts)
    }

    /// After a failure recorded by another statement (`CodeSignInStore.refuse`): locks the
    /// account when the day's failures, counted once that statement was committed, reach the
    /// limit. That statement counted the day as it stood when it started, so parallel wrong
    /// codes each saw the others' failures missing; the last of them to count after its commit
    /// sees them all, as in `failed`.
    func lockAccountIfDue(userID: UUID, dayFailures: Int, origin: RequestOrigin) async throws {
        if dayFailures >= rules.accountLockFailures {
            try await lockAccount(userID: userID, now: clock.now(), origin: origin)
        }
    }

    /// Locks the account for the day's wrong codes and throws `account_locked`.
    private func lockAccount(userID: UUID, now: Date, origin: RequestOrigin) async throws -> Never {
        if try await users.lock(userID: userID, now: now) {
            // A locked account's sessions end with it (issue S item 8): its tokens would
            // otherwise work until they expire.
            try await sessions.revokeAll(userID: userID, reason: "account locked")
            try await audit.record(
                .accountLocked, user: userID, detail: "\(rules.accountLockFailures) wrong codes in 24 hours",
                origin: origin)
        }
        throw Problem.accountLocked
    }

    /// A wrong authenticator-app code of `userID` at `now` as `begin` and `failed` record it, for
    /// a store that writes it in one statement when it locks nothing (`CodeSignInStore.refuse`).
    func refusal(userID: UUID, now: Date) -> CodeRefusal {
        CodeRefusal(
            userID: userID, failureID: SecureRandom.timeOrderedUUID(at: now), attemptLimit: rules.lockAfterFailures,
            accountLimit: rules.accountLockFailures, since: now.addingTimeInterval(-Self.accountDay), now: now)
    }

    /// Clears every factor lock of a user (admin unlock, completed recovery).
    func reset(userID: UUID) async throws {
        try await store.clearAll(userID: userID)
    }

    /// The refusal of a factor that is locked, or whose slots are all taken by codes still being
    /// checked (no lock yet: they will set it, so the first lockout is the best estimate).
    private func refused(lockedUntil: Date?, now: Date) -> Problem {
        Self.locked(until: lockedUntil ?? now.addingTimeInterval(rules.firstLockout), now: now)
    }

    static func locked(until: Date, now: Date) -> Problem {
        let seconds = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        return Problem(
            status: 429, code: .locked, title: "Too many wrong codes",
            detail: "Too many wrong codes for this method. Try again in \(TimeInterval(seconds).waitInWords), "
                + "or use another way.",
            attemptsRemaining: 0, retryAfter: seconds, lockoutUntil: until)
    }
}
