import Fluent
import Foundation
import SQLKit
import Vapor

/// Token buckets kept in the database, so a limit holds across server instances and under
/// parallel requests: taking a token is one conditional `UPDATE … RETURNING`, never a read
/// followed by a write.
struct RateLimiter: Sendable {
    /// A bucket of `capacity` tokens refilled at `perSecond`.
    struct Rule: Sendable {
        let capacity: Double
        let perSecond: Double

        init(capacity: Double, perSecond: Double) {
            self.capacity = capacity
            self.perSecond = perSecond
        }

        /// The bucket a throttle setting describes.
        init(_ throttle: ProductRules.Throttle) {
            self.init(capacity: Double(throttle.burst), perSecond: 1 / throttle.refillSeconds)
        }
    }

    /// What `take` found.
    enum Outcome: Equatable {
        case allowed
        /// Wait this many whole seconds for the next token.
        case limited(retryAfter: Int)
    }

    /// Takes one token from the bucket `key`, creating it full if it does not exist yet.
    static func take(_ key: String, rule: Rule, now: Date, on database: any Database) async throws -> Outcome {
        guard let sql = database as? any SQLDatabase else {
            throw Abort(.internalServerError, reason: "rate limits need an SQL database")
        }
        let time = now.timeIntervalSince1970
        try await sql.raw(
            """
            INSERT INTO rate_limit_buckets (key, tokens, updated_at) VALUES (\(bind: key), \(bind: rule.capacity), \(bind: time))
            ON CONFLICT (key) DO NOTHING
            """
        ).run()
        // The refilled level, capped at capacity; a clock behind the stored time refills nothing.
        let refilled: SQLQueryString = """
            (CASE WHEN \(bind: time) <= updated_at THEN tokens \
            WHEN tokens + (\(bind: time) - updated_at) * \(bind: rule.perSecond) >= \(bind: rule.capacity) THEN \(bind: rule.capacity) \
            ELSE tokens + (\(bind: time) - updated_at) * \(bind: rule.perSecond) END)
            """
        let taken = try await sql.raw(
            """
            UPDATE rate_limit_buckets SET tokens = \(refilled) - 1, \
            updated_at = (CASE WHEN \(bind: time) > updated_at THEN \(bind: time) ELSE updated_at END) \
            WHERE key = \(bind: key) AND \(refilled) >= 1 RETURNING tokens
            """
        ).all()
        if !taken.isEmpty { return .allowed }

        let row = try await sql.raw("SELECT tokens, updated_at FROM rate_limit_buckets WHERE key = \(bind: key)")
            .first()
        let tokens = (try? row?.decode(column: "tokens", as: Double.self)) ?? 0
        let missing = max(0, 1 - tokens)
        return .limited(retryAfter: max(1, Int((missing / rule.perSecond).rounded(.up))))
    }

    /// Fills the bucket again (after a successful sign-in, for example).
    static func reset(_ key: String, rule: Rule, now: Date, on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { return }
        try await sql.raw(
            """
            UPDATE rate_limit_buckets SET tokens = \(bind: rule.capacity), updated_at = \(bind: now.timeIntervalSince1970) \
            WHERE key = \(bind: key)
            """
        ).run()
    }
}
