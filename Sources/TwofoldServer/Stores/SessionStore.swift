import Foundation
import TwofoldSQLite

/// A signed-in session (`sessions`): one login, its refresh-token family and the access tokens
/// issued from it. Revoking the session revokes the whole family.
struct SessionRecord: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    /// When the user last proved a factor in this session (the `auth_time` claim).
    var authTime: Date
    /// RFC 8176 method references (`pwd`, `otp`, `mfa`, …).
    var methods: [String]
    var createdAt: Date
    var lastUsedAt: Date
    var ipAddress: String?
    var userAgent: String?
    var revokedAt: Date?
    /// What the session proved and when (`Proof`, bound to the credential it proved; stored as
    /// `SessionProofs` writes them).
    var proofs: [Proof: Date] = [:]
    /// The factors the session added itself (`FactorChanges.factorName`): none of them counts
    /// as its proof.
    var addedFactors: [String] = []
    /// The account's `SessionEpoch` its sign-in read before checking anything.
    var epoch: Int = 0
    /// Read: every session of the account was ended after this one's sign-in began
    /// (`SessionEpoch`), so it counts for nothing though it was never revoked itself.
    var superseded: Bool = false

    /// Neither revoked nor superseded: what every bearer check, refresh and page asks.
    var isLive: Bool { revokedAt == nil && !superseded }
}

/// One refresh token of a session's family, kept only as its SHA-256 hash.
struct RefreshTokenRecord: Sendable, Equatable {
    var id: UUID
    var sessionID: UUID
    var tokenHash: String
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
}

/// Sessions and their refresh tokens. Using a refresh token and revoking a session are each one
/// conditional statement, so of any number of parallel attempts exactly one wins.
protocol SessionStore: Sendable {
    /// Writes a session and its first refresh token (two statements, as one sign-in's unit of
    /// work sends them).
    func insert(_ session: SessionRecord, firstRefreshToken: RefreshTokenRecord) async throws
    func insert(_ refreshToken: RefreshTokenRecord) async throws
    /// Marks the unused, unexpired refresh token with `hash` of a live session used at `now`;
    /// its session's id when this call did.
    func useRefreshToken(hash: String, now: Date) async throws -> UUID?
    /// The refresh token with `hash`, used or not.
    func refreshToken(hash: String) async throws -> RefreshTokenRecord?
    func session(id: UUID) async throws -> SessionRecord?
    /// The user's live sessions (`SessionRecord.isLive`), most recently used first.
    func liveSessions(userID: UUID) async throws -> [SessionRecord]
    /// Sets `last_used_at`.
    func touch(sessionID: UUID, now: Date) async throws
    /// A freshly proven factor: `auth_time` and `last_used_at` become `now`, `amr` becomes
    /// `methods` and the proofs `proofs`; whether the session was live.
    func stepUp(sessionID: UUID, methods: [String], proofs: [Proof: Date], now: Date) async throws -> Bool
    /// Revokes the session if it is not revoked yet; whether this call did.
    func revoke(sessionID: UUID, reason: String, now: Date) async throws -> Bool
    /// Revokes every live session of `userID` but `kept`, after raising the account's
    /// `SessionEpoch` (with `kept` carried along); how many.
    func revokeAll(userID: UUID, except kept: UUID?, reason: String, now: Date) async throws -> Int
    /// Opens a factor reset of `userID` (`SessionEpoch`): claims it as `claim` until `until` and
    /// moves the count to the next odd value, `kept` carried along. `false`, changing nothing but
    /// `kept`'s count, while another reset's claim holds.
    func openReset(userID: UUID, kept: UUID?, claim: String, now: Date, until: Date) async throws -> Bool
    /// Closes it while the claim is still `claim`: the count to the next even value, `kept`
    /// carried along, the claim let go.
    func closeReset(userID: UUID, kept: UUID?, claim: String) async throws
    /// Closes every reset whose claim ran out by `now` (cut short); the accounts it closed.
    func closeAbandonedResets(now: Date) async throws -> [UUID]
    /// Appends `factors` to the ones the session added (one statement: a session may add several).
    func recordAdded(_ factors: [String], sessionID: UUID) async throws
    /// The factors the session added.
    func addedFactors(sessionID: UUID) async throws -> [String]
    /// Deletes refresh tokens, used or not, that expired by `now` (housekeeping). A used one is
    /// kept until then: presented again before, it is a copy and ends its session.
    func deleteExpiredRefreshTokens(now: Date) async throws

}

/// `SessionStore` on the server's database.
struct SQLSessionStore: SessionStore {
    let database: any SQLExecutor

    private static let sessionColumns =
        """
        id, user_id, auth_time, amr, created_at, last_used_at, ip_address, user_agent, revoked_at, proofs, \
        added_factors, session_epoch, CASE WHEN \(SessionEpoch.current("sessions")) THEN 0 ELSE 1 END
        """

    /// A session neither revoked nor superseded (`SessionRecord.isLive`), in SQL.
    static let live = "sessions.revoked_at IS NULL AND \(SessionEpoch.current("sessions"))"

    private static func session(_ row: StatementRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.uuid(0), userID: try row.uuid(1), authTime: try row.date(2),
            methods: try row.text(3).split(separator: ",").map(String.init), createdAt: try row.date(4),
            lastUsedAt: try row.date(5), ipAddress: try row.optionalText(6), userAgent: try row.optionalText(7),
            revokedAt: try row.optionalDate(8), proofs: SessionProofs.decode(try row.optionalText(9)),
            addedFactors: (try row.optionalText(10))?.split(separator: "\n").map(String.init) ?? [],
            epoch: try row.integer(11), superseded: try row.integer(12) != 0)
    }

    func insert(_ session: SessionRecord, firstRefreshToken: RefreshTokenRecord) async throws {
        try await database.run(Self.inserting(session))
        try await insert(firstRefreshToken)
    }

    func insert(_ refreshToken: RefreshTokenRecord) async throws {
        try await database.run(Self.inserting(refreshToken))
    }

    static func inserting(_ session: SessionRecord) -> Statement {
        Statement(
            """
            INSERT INTO sessions (id, user_id, auth_time, amr, created_at, last_used_at, ip_address, user_agent, proofs,
              session_epoch)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, .uuid(session.id), .uuid(session.userID), .date(session.authTime),
            .text(session.methods.joined(separator: ",")), .date(session.createdAt), .date(session.lastUsedAt),
            .text(session.ipAddress), .text(session.userAgent), .text(SessionProofs.encode(session.proofs)),
            .integer(session.epoch))
    }

    static func inserting(_ refreshToken: RefreshTokenRecord) -> Statement {
        Statement(
            "INSERT INTO refresh_tokens (id, session_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            .uuid(refreshToken.id), .uuid(refreshToken.sessionID), .text(refreshToken.tokenHash),
            .date(refreshToken.createdAt), .date(refreshToken.expiresAt))
    }

    func useRefreshToken(hash: String, now: Date) async throws -> UUID? {
        let used = try await database.changes(
            Statement(
                """
                UPDATE refresh_tokens SET used_at = ?
                WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?
                  AND EXISTS (SELECT 1 FROM sessions WHERE sessions.id = refresh_tokens.session_id AND \(Self.live))
                """, .date(now), .text(hash), .date(now)))
        guard used > 0 else { return nil }
        return try await refreshToken(hash: hash)?.sessionID
    }

    func refreshToken(hash: String) async throws -> RefreshTokenRecord? {
        try await database.rows(
            Statement(
                "SELECT id, session_id, token_hash, created_at, expires_at, used_at FROM refresh_tokens WHERE token_hash = ?",
                .text(hash)),
            {
                RefreshTokenRecord(
                    id: try $0.uuid(0), sessionID: try $0.uuid(1), tokenHash: try $0.text(2), createdAt: try $0.date(3),
                    expiresAt: try $0.date(4), usedAt: try $0.optionalDate(5))
            }
        ).first
    }

    func session(id: UUID) async throws -> SessionRecord? {
        try await database.rows(
            Statement("SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?", .uuid(id)), Self.session
        ).first
    }

    func liveSessions(userID: UUID) async throws -> [SessionRecord] {
        try await database.rows(
            Statement(
                """
                SELECT \(Self.sessionColumns) FROM sessions WHERE user_id = ? AND \(Self.live)
                ORDER BY last_used_at DESC
                """, .uuid(userID)), Self.session)
    }

    func touch(sessionID: UUID, now: Date) async throws {
        try await database.run(
            Statement("UPDATE sessions SET last_used_at = ? WHERE id = ?", .date(now), .uuid(sessionID)))
    }

    func stepUp(sessionID: UUID, methods: [String], proofs: [Proof: Date], now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE sessions SET amr = ?, proofs = ?, auth_time = ?, last_used_at = ?
                WHERE id = ? AND \(Self.live)
                """, .text(methods.joined(separator: ",")), .text(SessionProofs.encode(proofs)), .date(now), .date(now),
                .uuid(sessionID))) > 0
    }

    func revoke(sessionID: UUID, reason: String, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE sessions SET revoked_at = ?, revoke_reason = ? WHERE id = ? AND revoked_at IS NULL",
                .date(now), .text(reason), .uuid(sessionID))) > 0
    }

    /// The account's `SessionEpoch` is raised first (after `kept` is carried to its new value), so
    /// a session a sign-in under way writes after the revocation is superseded from the start.
    func revokeAll(userID: UUID, except kept: UUID?, reason: String, now: Date) async throws -> Int {
        if let kept { try await database.run(SessionEpoch.carrying(kept, userID: userID, .past)) }
        try await database.run(SessionEpoch.raising(userID: userID))
        if let kept {
            return try await database.changes(
                Statement(
                    """
                    UPDATE sessions SET revoked_at = ?, revoke_reason = ?
                    WHERE user_id = ? AND revoked_at IS NULL AND id <> ?
                    """, .date(now), .text(reason), .uuid(userID), .uuid(kept)))
        }
        return try await database.changes(
            Statement(
                "UPDATE sessions SET revoked_at = ?, revoke_reason = ? WHERE user_id = ? AND revoked_at IS NULL",
                .date(now), .text(reason), .uuid(userID)))
    }

    func openReset(userID: UUID, kept: UUID?, claim: String, now: Date, until: Date) async throws -> Bool {
        if let kept { try await database.run(SessionEpoch.carrying(kept, userID: userID, .opening)) }
        return try await database.changes(
            SessionEpoch.opening(userID: userID, claim: claim, now: now, until: until)) > 0
    }

    func closeReset(userID: UUID, kept: UUID?, claim: String) async throws {
        if let kept { try await database.run(SessionEpoch.carrying(kept, userID: userID, .closing)) }
        try await database.run(SessionEpoch.closing(userID: userID, claim: claim))
    }

    func closeAbandonedResets(now: Date) async throws -> [UUID] {
        var closed: [UUID] = []
        for id in try await database.rows(SessionEpoch.abandoned(now: now), { try $0.uuid(0) })
        where try await database.changes(SessionEpoch.closingAbandoned(userID: id, now: now)) > 0 {
            closed.append(id)
        }
        return closed
    }

    func recordAdded(_ factors: [String], sessionID: UUID) async throws {
        guard !factors.isEmpty else { return }
        let entries = factors.map { $0 + "\n" }.joined()
        try await database.run(
            Statement(
                "UPDATE sessions SET added_factors = COALESCE(added_factors, ?) || ? WHERE id = ?", .text("\n"),
                .text(entries), .uuid(sessionID)))
    }

    func addedFactors(sessionID: UUID) async throws -> [String] {
        let stored = try await database.rows(
            Statement("SELECT added_factors FROM sessions WHERE id = ?", .uuid(sessionID)), { try $0.optionalText(0) })
        return (stored.first ?? nil)?.split(separator: "\n").map(String.init) ?? []
    }

    func deleteExpiredRefreshTokens(now: Date) async throws {
        try await database.run(Statement("DELETE FROM refresh_tokens WHERE expires_at <= ?", .date(now)))
    }
}
