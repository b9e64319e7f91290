import Fluent
import Foundation
import NIOCore
import SQLKit
import Vapor

/// Deletes state that has outlived its purpose: pending TOTP secrets never confirmed within 10
/// minutes (seed 000), finished or expired login flows, expired refresh tokens (used ones too: see `sweep`), idle rate-limit
/// buckets, wrong-code records older than the 24-hour rule needs, and device-key challenges a
/// day after they expired (until then a late signature is told "expired", not "unknown"). Runs every minute on each
/// instance; every statement is idempotent, so instances never conflict. Each statement reads
/// an index on the time it deletes by (`CreateExpiryIndexes`), so a sweep costs what it deletes.
/// With an SQLite file it runs on Twofold's own connection, as sign-ins do, so the two never
/// wait for each other's write lock.
enum Housekeeping {
    static func sweep(on sql: any SQLDatabase, now: Date) async throws {
        let day = now.addingTimeInterval(-24 * 3600)
        try await sql.raw("DELETE FROM totp_credentials WHERE status = 'pending' AND expires_at <= \(bind: now)").run()
        try await sql.raw("DELETE FROM login_flows WHERE expires_at <= \(bind: day)").run()
        // A used refresh token stays until it would have expired: presented again at any time
        // before, it is a copy and ends its session (issue S item 7; deleting it after a day let
        // a thief's rotation go unnoticed when the victim's app came back later).
        try await sql.raw("DELETE FROM refresh_tokens WHERE expires_at <= \(bind: now)").run()
        try await sql.raw("DELETE FROM rate_limit_buckets WHERE updated_at <= \(bind: day.timeIntervalSince1970)").run()
        try await sql.raw("DELETE FROM factor_failures WHERE occurred_at <= \(bind: day)").run()
        try await sql.raw("DELETE FROM device_challenges WHERE expires_at <= \(bind: day)").run()
    }
}
