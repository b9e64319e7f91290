import Foundation
import TwofoldSQLite

/// Token buckets (`rate_limit_buckets`), kept in the database so a limit holds across server
/// instances and under parallel requests.
protocol RateLimitStore: Sendable {
    /// Takes one token from bucket `key` — created full (`capacity`) if it does not exist, refilled
    /// at `perSecond` since it was last touched, never above `capacity` — in one conditional
    /// update; whether there was a token to take.
    func take(_ key: String, capacity: Double, perSecond: Double, now: Date) async throws -> Bool
    /// The tokens bucket `key` held when last touched (0 when it does not exist).
    func tokens(_ key: String) async throws -> Double
    /// Fills bucket `key` to `capacity`, if it exists.
    func refill(_ key: String, capacity: Double, now: Date) async throws
    /// Puts one token back into bucket `key` (up to `capacity`), if it exists.
    func giveBack(_ key: String, capacity: Double) async throws
    /// Deletes buckets untouched since `before` (housekeeping): a full bucket is what a missing one means.
    func deleteIdle(before: Date) async throws

}

/// `RateLimitStore` on the server's database.
struct SQLRateLimitStore: RateLimitStore {
    let database: any SQLExecutor

    func take(_ key: String, capacity: Double, perSecond: Double, now: Date) async throws -> Bool {
        let time = now.timeIntervalSince1970
        try await database.run(
            Statement(
                "INSERT INTO rate_limit_buckets (key, tokens, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                .text(key), .double(capacity), .double(time)))
        // The refilled level, capped at capacity; a clock behind the stored time refills nothing.
        let refilled = """
            (CASE WHEN ? <= updated_at THEN tokens WHEN tokens + (? - updated_at) * ? >= ? THEN ? \
            ELSE tokens + (? - updated_at) * ? END)
            """
        let refill: [Statement.Value] = [
            .double(time), .double(time), .double(perSecond), .double(capacity), .double(capacity), .double(time),
            .double(perSecond),
        ]
        return try await database.changes(
            Statement(
                """
                UPDATE rate_limit_buckets SET tokens = \(refilled) - 1,
                  updated_at = (CASE WHEN ? > updated_at THEN ? ELSE updated_at END)
                WHERE key = ? AND \(refilled) >= 1
                """, refill + [.double(time), .double(time), .text(key)] + refill)) > 0
    }

    func tokens(_ key: String) async throws -> Double {
        try await database.rows(
            Statement("SELECT tokens FROM rate_limit_buckets WHERE key = ?", .text(key)), { try $0.double(0) }
        ).first ?? 0
    }

    func refill(_ key: String, capacity: Double, now: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE rate_limit_buckets SET tokens = ?, updated_at = ? WHERE key = ?", .double(capacity),
                .double(now.timeIntervalSince1970), .text(key)))
    }

    func giveBack(_ key: String, capacity: Double) async throws {
        try await database.run(
            Statement(
                "UPDATE rate_limit_buckets SET tokens = CASE WHEN tokens + 1 > ? THEN ? ELSE tokens + 1 END WHERE key = ?",
                .double(capacity), .double(capacity), .text(key)))
    }

    func deleteIdle(before: Date) async throws {
        try await database.run(
            Statement("DELETE FROM rate_limit_buckets WHERE updated_at <= ?", .double(before.timeIntervalSince1970)))
    }
}
