import Foundation
import TwofoldSQLite

/// A factor's wrong-code count and lock for one user (`factor_guards`).
struct FactorGuardState: Sendable, Equatable {
    var attempts: Int
    var lockouts: Int
    var lockedUntil: Date?
}

/// What `FactorGuardStore.tally` read.
struct FactorTally: Sendable, Equatable {
    var failures: Int
    var attempts: Int?
    var lockouts: Int?
}

/// Factor guards and the day's failures (`factor_guards`, `factor_failures`). Taking an attempt
/// slot and setting a lock are each one conditional statement, so however many requests race, no
/// more codes are checked than the limit allows.
protocol FactorGuardStore: Sendable {
    /// Takes an attempt slot: the first attempt makes the guard; later ones take a slot only while
    /// the factor is not locked with fewer than `limit` attempts, or its lock has run out at `now`
    /// (which starts the count again). Whether a slot was taken.
    func takeSlot(userID: UUID, factor: String, limit: Int, now: Date) async throws -> Bool
    func state(userID: UUID, factor: String) async throws -> FactorGuardState?
    /// The count starts again: no attempts, no lockouts, no lock.
    func clear(userID: UUID, factor: String) async throws
    /// Gives back one attempt slot of a factor that is not locked: a right code sent twice at
    /// once guessed nothing, so its copy leaves the count as it found it.
    func giveBack(userID: UUID, factor: String) async throws
    /// Clears every guard of the user and forgets their failures (an admin unlock).
    func clearAll(userID: UUID) async throws
    func recordFailure(id: UUID, userID: UUID, factor: String, at: Date) async throws
    /// The user's failures after `since`, and the factor's attempts and lockouts (`nil` without a
    /// guard), in one read.
    func tally(userID: UUID, factor: String, since: Date) async throws -> FactorTally
    /// Locks the factor until `until` if it is not locked and has `limit` attempts; whether this
    /// call did (and counted the lockout).
    func lock(userID: UUID, factor: String, until: Date, limit: Int) async throws -> Bool
    /// Deletes failures that happened by `before` (housekeeping).
    func deleteFailures(before: Date) async throws

}

/// `FactorGuardStore` on the server's database.
struct SQLFactorGuardStore: FactorGuardStore {
    let database: any SQLExecutor

    func takeSlot(userID: UUID, factor: String, limit: Int, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                INSERT INTO factor_guards (user_id, factor, attempts, lockouts) VALUES (?, ?, 1, 0)
                \(Self.takingSlot)
                WHERE (factor_guards.locked_until IS NULL AND factor_guards.attempts < ?)
                  OR (factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?)
                """, .uuid(userID), .text(factor), .date(now), .date(now), .integer(limit), .date(now))) > 0
    }

    /// How a slot is taken from a guard row that exists (an upsert's `ON CONFLICT` clause, to
    /// which the conditions are added): one attempt more, or the first again once the lock has
    /// run out at the `?` (twice).
    static let takingSlot = """
        ON CONFLICT (user_id, factor) DO UPDATE SET
          attempts = CASE WHEN factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?
            THEN 1 ELSE factor_guards.attempts + 1 END,
          locked_until = CASE WHEN factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?
            THEN NULL ELSE factor_guards.locked_until END
        """

    func state(userID: UUID, factor: String) async throws -> FactorGuardState? {
        try await database.rows(
            Statement(
                "SELECT attempts, lockouts, locked_until FROM factor_guards WHERE user_id = ? AND factor = ?",
                .uuid(userID), .text(factor)),
            {
                FactorGuardState(
                    attempts: try $0.integer(0), lockouts: try $0.integer(1), lockedUntil: try $0.optionalDate(2))
            }
        ).first
    }

    func clear(userID: UUID, factor: String) async throws {
        try await database.run(Self.clearing(userID: userID, factor: factor))
    }

    func giveBack(userID: UUID, factor: String) async throws {
        try await database.run(
            Statement(
                """
                UPDATE factor_guards SET attempts = attempts - 1
                WHERE user_id = ? AND factor = ? AND attempts > 0 AND locked_until IS NULL
                """, .uuid(userID), .text(factor)))
    }

    /// Starts the count again (ends in its `WHERE` clause).
    static func clearing(userID: UUID, factor: String) -> Statement {
        Statement(
            "UPDATE factor_guards SET attempts = 0, lockouts = 0, locked_until = NULL WHERE user_id = ? AND factor = ?",
            .uuid(userID), .text(factor))
    }

    /// A row when the factor is closed at `now`, as `FactorGuard.admit` reads it: locked until
    /// later, or not locked with `limit` attempts used.
    static func closed(userID: UUID, factor: String, limit: Int, now: Date) -> Statement {
        Statement(
            """
            SELECT 1 FROM factor_guards WHERE user_id = ? AND factor = ?
              AND CASE WHEN locked_until IS NULL THEN attempts >= ? ELSE locked_until > ? END
            """, .uuid(userID), .text(factor), .integer(limit), .date(now))
    }

    func clearAll(userID: UUID) async throws {
        try await database.run(
            Statement(
                "UPDATE factor_guards SET attempts = 0, lockouts = 0, locked_until = NULL WHERE user_id = ?",
                .uuid(userID)))
        try await database.run(Statement("DELETE FROM factor_failures WHERE user_id = ?", .uuid(userID)))
    }

    func recordFailure(id: UUID, userID: UUID, factor: String, at: Date) async throws {
        try await database.run(
            Statement(
                "INSERT INTO factor_failures (id, user_id, factor, occurred_at) VALUES (?, ?, ?, ?)", .uuid(id),
                .uuid(userID), .text(factor), .date(at)))
    }

    func tally(userID: UUID, factor: String, since: Date) async throws -> FactorTally {
        try await database.rows(
            Self.tallying(userID: userID, factor: factor, since: since),
            {
                FactorTally(
                    failures: try $0.integer(0), attempts: try $0.optionalInteger(1),
                    lockouts: try $0.optionalInteger(2))
            }
        ).first ?? FactorTally(failures: 0, attempts: nil, lockouts: nil)
    }

    /// `tally`'s statement, named: on PostgreSQL every wrong app code sends it
    /// (`FactorGuard.lockAccountIfDue`), so it is prepared once per connection.
    static func tallying(userID: UUID, factor: String, since: Date) -> Statement {
        Statement(
            """
            SELECT
              (SELECT COUNT(*) FROM factor_failures WHERE user_id = ? AND occurred_at > ?) AS failures,
              (SELECT attempts FROM factor_guards WHERE user_id = ? AND factor = ?) AS attempts,
              (SELECT lockouts FROM factor_guards WHERE user_id = ? AND factor = ?) AS lockouts
            """, .uuid(userID), .date(since), .uuid(userID), .text(factor), .uuid(userID), .text(factor)
        ).named(tallyName)
    }

    static let tallyName = "twofold_factor_tally"

    /// `tallying` as PostgreSQL prepares it.
    enum TallyText: PreparedText {
        private static let sample = SQLFactorGuardStore.tallying(
            userID: UUID(), factor: "", since: Date(timeIntervalSince1970: 0))
        static let name = SQLFactorGuardStore.tallyName
        static let sql = PostgresStatements.numbered(sample.sql)
        static let types = PostgresStatements.types(sample.values)
    }

    func lock(userID: UUID, factor: String, until: Date, limit: Int) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE factor_guards SET locked_until = ?, lockouts = lockouts + 1
                WHERE user_id = ? AND factor = ? AND locked_until IS NULL AND attempts >= ?
                """, .date(until), .uuid(userID), .text(factor), .integer(limit))) > 0
    }

    func deleteFailures(before: Date) async throws {
        try await database.run(Statement("DELETE FROM factor_failures WHERE occurred_at <= ?", .date(before)))
    }
}
