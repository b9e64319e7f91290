import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import Vapor

/// Wrong-code limits per user and factor (seed 000, seed 002; the numbers are `ProductRules`'
/// defaults): 5 consecutive wrong codes lock that factor for 5 minutes, each further lockout
/// doubles the time (up to a day), and 20 wrong codes in 24 hours lock the account until an
/// admin unlocks it. The count belongs to the user and
/// factor, not to a login flow, so starting a new flow does not reset it (Keycloak #26180).
///
/// An attempt takes a slot *before* its code is checked, with one conditional update, so however
/// many requests race, at most 5 codes are ever evaluated before the lock.
enum FactorGuard {
    /// Takes an attempt slot for `factor`, or throws `429 locked` with `lockoutUntil`.
    static func begin(_ factor: String, userID: UUID, request: Request) async throws {
        let now = request.twofold.clock.now()
        let rules = request.twofold.rules
        // One statement: the first attempt inserts the row, later ones take a slot only while the
        // factor is not locked (or its lock has run out, which starts the count again).
        let granted = try await request.changes(
            Statement(
                """
                INSERT INTO factor_guards (user_id, factor, attempts, lockouts) VALUES (?, ?, 1, 0)
                ON CONFLICT (user_id, factor) DO UPDATE SET
                  attempts = CASE WHEN factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?
                    THEN 1 ELSE factor_guards.attempts + 1 END,
                  locked_until = CASE WHEN factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?
                    THEN NULL ELSE factor_guards.locked_until END
                WHERE (factor_guards.locked_until IS NULL AND factor_guards.attempts < ?)
                  OR (factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?)
                """, .uuid(userID), .text(factor), .date(now), .date(now), .integer(rules.lockAfterFailures), .date(now)
            ))
        guard granted == 0 else { return }
        let lockedUntil = try await request.rows(
            Statement(
                "SELECT locked_until FROM factor_guards WHERE user_id = ? AND factor = ?", .uuid(userID), .text(factor)),
            { try $0.optionalDate(0) })
        throw refused(lockedUntil: lockedUntil.first ?? nil, now: now, rules: rules)
    }

    /// Throws `429 locked` as `begin` would, without taking a slot: for a code already judged
    /// right before its unit of work (an authenticator app's), whose verdict may be told only
    /// while the factor is not locked. A right code ends the count (`succeeded`), so the slot
    /// `begin` would take is given back at once: reading instead writes nothing for a user with
    /// no wrong codes to forget, as on most sign-ins. Answers whether there is a count to forget
    /// (`succeeded` is then due once the code is accepted).
    static func admit(_ factor: String, userID: UUID, request: Request) async throws -> Bool {
        let now = request.twofold.clock.now()
        let rules = request.twofold.rules
        let guarded = try await request.rows(
            Statement(
                "SELECT attempts, lockouts, locked_until FROM factor_guards WHERE user_id = ? AND factor = ?",
                .uuid(userID), .text(factor)),
            { (attempts: try $0.integer(0), lockouts: try $0.integer(1), lockedUntil: try $0.optionalDate(2)) }
        ).first
        guard let guarded else { return false }
        // Open as `begin`'s condition reads: not locked with a slot left, or the lock run out.
        let open = guarded.lockedUntil.map { $0 <= now } ?? (guarded.attempts < rules.lockAfterFailures)
        guard open else { throw refused(lockedUntil: guarded.lockedUntil, now: now, rules: rules) }
        return guarded.attempts != 0 || guarded.lockouts != 0 || guarded.lockedUntil != nil
    }

    /// The code was right: the consecutive count starts again.
    static func succeeded(_ factor: String, userID: UUID, request: Request) async throws {
        try await request.run(
            Statement(
                "UPDATE factor_guards SET attempts = 0, lockouts = 0, locked_until = NULL WHERE user_id = ? AND factor = ?",
                .uuid(userID), .text(factor)))
    }

    /// The code was wrong: records it, locks the factor at the fifth in a row and the account at
    /// the twentieth in a day, and throws the problem to answer (`invalid_code` with
    /// `attemptsRemaining`, `locked`, or `account_locked`).
    ///
    /// `countsTowardAccount` is `false` for a factor a stranger can try with nothing but a
    /// username (seed 004's SMS and device-key sign-in): its wrong codes lock that factor, never
    /// the account, or anyone could lock anyone out (issue S item 3).
    static func failed(_ factor: String, userID: UUID, countsTowardAccount: Bool = true, request: Request)
        async throws -> Never
    {
        let now = request.twofold.clock.now()
        let rules = request.twofold.rules
        if countsTowardAccount {
            try await request.run(
                Statement(
                    "INSERT INTO factor_failures (id, user_id, factor, occurred_at) VALUES (?, ?, ?, ?)",
                    .uuid(SecureRandom.timeOrderedUUID(at: now)), .uuid(userID), .text(factor), .date(now)))
        }
        // One statement for the day's failures and this factor's count.
        let counts = try await request.rows(
            Statement(
                """
                SELECT
                  (SELECT COUNT(*) FROM factor_failures WHERE user_id = ? AND occurred_at > ?) AS failures,
                  (SELECT attempts FROM factor_guards WHERE user_id = ? AND factor = ?) AS attempts,
                  (SELECT lockouts FROM factor_guards WHERE user_id = ? AND factor = ?) AS lockouts
                """, .uuid(userID), .date(now.addingTimeInterval(-24 * 3600)), .uuid(userID), .text(factor),
                .uuid(userID), .text(factor)),
            { row in
                (
                    failures: try row.integer(0), attempts: try row.optionalInteger(1),
                    lockouts: try row.optionalInteger(2)
                )
            }
        ).first
        if countsTowardAccount, (counts?.failures ?? 0) >= rules.accountLockFailures {
            let locked = try await request.changes(
                Statement(
                    "UPDATE users SET status = 'locked', updated_at = ? WHERE id = ? AND status = 'active'",
                    .date(now), .uuid(userID)))
            if locked > 0 {
                // A locked account's sessions end with it (issue S item 8): its tokens would
                // otherwise work until they expire.
                try await request.twofold.sessions.revokeAll(userID: userID, reason: "account locked")
                try await AuditLog.record(
                    .accountLocked, user: userID, detail: "\(rules.accountLockFailures) wrong codes in 24 hours",
                    request: request)
            }
            throw Problem.accountLocked
        }

        // Fail closed: a guard row that cannot be read counts as the last attempt.
        let maximumAttempts = rules.lockAfterFailures
        let attempts = (counts?.attempts ?? nil) ?? maximumAttempts
        let lockouts = (counts?.lockouts ?? nil) ?? 0
        guard attempts >= maximumAttempts else {
            throw Problem(
                status: 401, code: .invalidCode, title: "Wrong code", detail: "That code is not right.",
                attemptsRemaining: maximumAttempts - attempts)
        }
        let duration = min(rules.longestLockout, rules.firstLockout * pow(2, Double(lockouts)))
        let until = now.addingTimeInterval(duration)
        let set = try await request.changes(
            Statement(
                """
                UPDATE factor_guards SET locked_until = ?, lockouts = lockouts + 1
                WHERE user_id = ? AND factor = ? AND locked_until IS NULL AND attempts >= ?
                """, .date(until), .uuid(userID), .text(factor), .integer(maximumAttempts)))
        if set > 0 {
            try await AuditLog.record(
                .lockout, user: userID, detail: "\(factor) locked for \(Int(duration / 60)) minutes", request: request)
        }
        throw locked(until: until, now: now)
    }

    /// Clears every factor lock of a user (admin unlock, completed recovery).
    static func reset(userID: UUID, on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw(
            "UPDATE factor_guards SET attempts = 0, lockouts = 0, locked_until = NULL WHERE user_id = \(bind: userID)"
        ).run()
        try await sql.raw("DELETE FROM factor_failures WHERE user_id = \(bind: userID)").run()
    }

    /// The refusal of a factor that is locked, or whose slots are all taken by codes still being
    /// checked (no lock yet: they will set it, so the first lockout is the best estimate).
    private static func refused(lockedUntil: Date?, now: Date, rules: ProductRules) -> Problem {
        locked(until: lockedUntil ?? now.addingTimeInterval(rules.firstLockout), now: now)
    }

    static func locked(until: Date, now: Date) -> Problem {
        let seconds = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        return Problem(
            status: 429, code: .locked, title: "Too many wrong codes",
            detail: "This factor is locked; try again in \(seconds) seconds or use another method.",
            attemptsRemaining: 0, retryAfter: seconds, lockoutUntil: until)
    }
}
