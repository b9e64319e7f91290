import Foundation
import TwofoldSQLite

/// The session a factor is added by, and the rule every write that adds one obeys: **a factor is
/// written only while the session adding it is live, checked in the write's own statement.**
///
/// The bearer check runs as a request arrives; the factor is written later (after the policy,
/// a passkey's attestation, a code's check). A session revoked in between — signed out
/// everywhere, by a password change, an administrator's MFA reset or a recovery — must not get
/// its factor written after, where the revoker's removal of factors no longer sees it. So each
/// store write that makes a factor usable or moves where codes go (a passkey, a device's key or
/// SMS sign-in, an authenticator app's activation, SMS or email codes turned on, a new phone
/// number or email address) carries `condition` in its statement. On PostgreSQL the session's
/// row is locked `FOR SHARE` until the write commits, so a revocation waits for the write and
/// whatever the revoker removes after it sees the factor; SQLite runs one writer at a time. A
/// session a sign-in wrote after its account's sessions were all ended is not live either
/// (`SessionEpoch`).
struct AddingSession: Sendable, Equatable {
    /// The session's ID.
    let id: UUID

    /// The session of a caller.
    init(_ id: UUID) { self.id = id }

    /// `EXISTS (…)` over the live session, for `database`'s dialect, with its one placeholder.
    func condition(on database: any SQLExecutor) -> String {
        "EXISTS (SELECT 1 FROM sessions WHERE id = ? AND \(SQLSessionStore.live)\(database.isPostgreSQL ? " FOR SHARE OF sessions" : ""))"
    }

    /// `insert` (an `INSERT … VALUES (…)` with nothing after) as a write that happens only while
    /// the session is live; `suffix` follows the condition (` ON CONFLICT DO NOTHING`).
    func insert(_ insert: Statement, suffix: String = "", on database: any SQLExecutor) -> Statement {
        Statement(
            SQLCodeSignInStore.conditional(insert, casts: database.isPostgreSQL) + " WHERE "
                + condition(on: database) + suffix, insert.values + [value])
    }

    /// `update` (an `UPDATE … WHERE …` or `DELETE … WHERE …` with nothing after) as a write that
    /// happens only while the session is live.
    func update(_ update: Statement, on database: any SQLExecutor) -> Statement {
        Statement(update.sql + " AND " + condition(on: database), update.values + [value])
    }

    /// The value of `condition`'s placeholder.
    var value: Statement.Value { .uuid(id) }

    /// The answer to a write that `condition` stopped.
    static let ended = BearerAuthentication.unauthorized("The session of this access token has ended.")

    /// After a conditional write that changed nothing: throws `ended` when the session is no
    /// longer live (so the caller hears why), and returns when something else stopped the write.
    func requireLive(on database: any SQLExecutor) async throws {
        let live = try await database.count(
            Statement("SELECT 1 FROM sessions WHERE id = ? AND \(SQLSessionStore.live)", value))
        if live == 0 { throw Self.ended }
    }
}

extension SQLExecutor {
    /// Runs `update` (an `UPDATE`/`DELETE … WHERE …`), only while `session` is live when one is
    /// given; how many rows it changed. Throws `AddingSession.ended` when the session stopped it.
    func changes(_ update: Statement, whileLive session: AddingSession?) async throws -> Int {
        guard let session else { return try await changes(update) }
        let changed = try await changes(session.update(update, on: self))
        if changed == 0 { try await session.requireLive(on: self) }
        return changed
    }

    /// Runs `insert` (an `INSERT … VALUES (…)`) followed by `suffix`, only while `session` is
    /// live when one is given; how many rows it wrote. Throws `AddingSession.ended` when the
    /// session stopped it.
    func changes(inserting insert: Statement, suffix: String = "", whileLive session: AddingSession?) async throws
        -> Int
    {
        guard let session else { return try await changes(Statement(insert.sql + suffix, insert.values)) }
        let changed = try await changes(session.insert(insert, suffix: suffix, on: self))
        if changed == 0 { try await session.requireLive(on: self) }
        return changed
    }
}
