import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import Vapor

/// Starts sessions and rotates their refresh tokens.
///
/// Every refresh token is used once. Exchanging one is a single conditional `UPDATE … WHERE
/// used_at IS NULL … RETURNING`, so of any number of parallel exchanges exactly one wins.
/// Presenting a token that was already exchanged means it was copied: the whole session (the
/// token family) is revoked and the reuse audited (OAuth 2.0 Security BCP §4.14).
enum SessionService {
    /// Creates a session for a user who has just proven `methods`, with its first token pair.
    static func start(user: User, methods: [String], request: Request) async throws -> AuthTokensResponse {
        try tokens(for: try await record(user: user, methods: methods, request: request), request: request)
    }

    /// A session written to the database whose access token is not signed yet: the second step
    /// writes it next to the database and signs elsewhere, so the database's thread does not.
    struct Recorded: Sendable {
        let userID: UUID
        let sessionID: UUID
        let methods: [String]
        let now: Date
        let refreshToken: TokenDTO
        let user: UserDTO
    }

    /// A refresh token about to be written: the token (shown once), its hash and its key, made
    /// beforehand (randomness and hashing) so that writing it is one statement.
    struct NewRefreshToken: Sendable {
        let id: UUID
        let token: TokenDTO
        let hash: String

        init(now: Date, request: Request) {
            let token = SecureToken.generate()
            id = SecureRandom.timeOrderedUUID(at: now)
            self.token = TokenDTO(
                token: token, expiresAt: now.addingTimeInterval(request.twofold.configuration.refreshTokenLifetime))
            hash = SecureToken.hash(token)
        }

        func insert(for sessionID: UUID, now: Date) -> Statement {
            Statement(
                "INSERT INTO refresh_tokens (id, session_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                .uuid(id), .uuid(sessionID), .text(hash), .date(now), .date(token.expiresAt))
        }
    }

    /// A session about to be written, with its key and first refresh token already made, so
    /// that writing it is two statements and nothing else: the second step makes it before its
    /// unit of work.
    struct NewSession: Sendable {
        let recorded: Recorded
        let refreshToken: NewRefreshToken
        let ipAddress: String?
        let userAgent: String?

        init(user: UserDTO, methods: [String], request: Request) {
            let now = request.twofold.clock.now()
            refreshToken = NewRefreshToken(now: now, request: request)
            recorded = Recorded(
                userID: user.id, sessionID: SecureRandom.timeOrderedUUID(at: now), methods: methods, now: now,
                refreshToken: refreshToken.token, user: user)
            ipAddress = request.clientAddress
            userAgent = request.userAgent
        }
    }

    /// Writes the session and its first refresh token.
    static func record(user: User, methods: [String], request: Request) async throws -> Recorded {
        try await record(NewSession(user: user.dto, methods: methods, request: request), request: request)
    }

    /// Writes a session made beforehand and its first refresh token.
    static func record(_ session: NewSession, request: Request) async throws -> Recorded {
        let recorded = session.recorded
        let now = recorded.now
        // Plain SQL rather than `Session.create`: every sign-in comes through here.
        try await request.run(
            Statement(
                """
                INSERT INTO sessions (id, user_id, auth_time, amr, created_at, last_used_at, ip_address, user_agent)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, .uuid(recorded.sessionID), .uuid(recorded.userID), .date(now),
                .text(recorded.methods.joined(separator: ",")), .date(now), .date(now), .text(session.ipAddress),
                .text(session.userAgent)))
        try await request.run(session.refreshToken.insert(for: recorded.sessionID, now: now))
        return recorded
    }

    /// Signs the access token of a recorded session.
    static func tokens(for session: Recorded, request: Request) throws -> AuthTokensResponse {
        let access = try request.twofold.tokens.issue(
            userID: session.userID, sessionID: session.sessionID, methods: session.methods, authTime: session.now,
            now: session.now)
        return AuthTokensResponse(accessToken: access, refreshToken: session.refreshToken, user: session.user)
    }

    static func newRefreshToken(for sessionID: UUID, now: Date, request: Request) async throws -> TokenDTO {
        let fresh = NewRefreshToken(now: now, request: request)
        try await request.run(fresh.insert(for: sessionID, now: now))
        return fresh.token
    }

    /// Exchanges a refresh token for a new pair.
    static func refresh(_ token: String, request: Request) async throws -> RefreshResponse {
        let sql = try request.sql
        let now = request.twofold.clock.now()
        let hash = SecureToken.hash(token)
        let claimed = try await sql.raw(
            """
            UPDATE refresh_tokens SET used_at = \(bind: now)
            WHERE token_hash = \(bind: hash) AND used_at IS NULL AND expires_at > \(bind: now)
            AND EXISTS (SELECT 1 FROM sessions WHERE sessions.id = refresh_tokens.session_id AND revoked_at IS NULL)
            RETURNING session_id
            """
        ).all()
        guard let row = claimed.first else {
            try await explainRefusal(hash: hash, now: now, request: request)
        }
        let sessionID = try row.decode(column: "session_id", as: UUID.self)
        guard let session = try await Session.find(sessionID, on: request.db) else { throw invalidRefreshToken }
        session.lastUsedAt = now
        try await session.update(on: request.db)
        let refresh = try await newRefreshToken(for: sessionID, now: now, request: request)
        let access = try request.twofold.tokens.issue(
            userID: session.userID, sessionID: sessionID, methods: session.methods, authTime: session.authTime,
            now: now)
        return RefreshResponse(accessToken: access, refreshToken: refresh)
    }

    /// Why a refresh token could not be claimed; revokes the family when it had been used before.
    private static func explainRefusal(hash: String, now: Date, request: Request) async throws -> Never {
        guard let stored = try await RefreshToken.query(on: request.db).filter(\.$tokenHash == hash).first() else {
            throw invalidRefreshToken
        }
        if stored.usedAt != nil {
            if try await revoke(sessionID: stored.sessionID, reason: "refresh_token_reused", now: now, on: request.db) {
                let session = try await Session.find(stored.sessionID, on: request.db)
                try await AuditLog.record(
                    .refreshTokenReused, user: session?.userID,
                    detail: "an already rotated refresh token was presented; session \(stored.sessionID) revoked",
                    request: request)
            }
            throw invalidRefreshToken
        }
        if stored.expiresAt <= now {
            throw Problem(status: 401, code: .expired, title: "Refresh token expired", detail: "Sign in again.")
        }
        throw invalidRefreshToken  // its session was revoked
    }

    static let invalidRefreshToken = Problem(
        status: 401, code: .unauthorized, title: "Invalid refresh token",
        detail: "The refresh token is not valid; sign in again.")

    /// Records a freshly proven second factor on the caller's session: `auth_time` becomes now and
    /// `amr` gains the method (and `mfa`). Returns a new access token carrying both.
    static func stepUp(caller: AuthenticatedUser, amr method: String, request: Request) async throws -> TokenDTO {
        guard let session = try await Session.find(caller.sessionID, on: request.db), session.revokedAt == nil else {
            throw BearerAuthentication.unauthorized("The session of this access token has ended.")
        }
        let now = request.twofold.clock.now()
        var methods = session.methods
        for value in [method, "mfa"] where !methods.contains(value) { methods.append(value) }
        session.amr = methods.joined(separator: ",")
        session.authTime = now
        session.lastUsedAt = now
        try await session.update(on: request.db)
        return try request.twofold.tokens.issue(
            userID: caller.userID, sessionID: caller.sessionID, methods: methods, authTime: now, now: now)
    }

    /// Revokes every active session of a user, in one statement that may run inside a unit of
    /// work (a lock set by a wrong code); returns how many.
    @discardableResult
    static func revokeAll(userID: UUID, reason: String, request: Request) async throws -> Int {
        try await request.changes(
            Statement(
                "UPDATE sessions SET revoked_at = ?, revoke_reason = ? WHERE user_id = ? AND revoked_at IS NULL",
                .date(request.twofold.clock.now()), .text(reason), .uuid(userID)))
    }

    /// Records that the session `sessionID` added `factors` (`FactorChanges.factorName`), so
    /// that none of them steps it up. Appended in one statement: a session may add several.
    static func recordAdded(_ factors: [String], sessionID: UUID, request: Request) async throws {
        guard !factors.isEmpty else { return }
        let entries = factors.map { $0 + "\n" }.joined()
        try await request.run(
            Statement(
                "UPDATE sessions SET added_factors = COALESCE(added_factors, ?) || ? WHERE id = ?", .text("\n"),
                .text(entries), .uuid(sessionID)))
    }

    /// Whether the session `sessionID` added `factor` (`recordAdded`).
    static func added(_ factor: String, sessionID: UUID, request: Request) async throws -> Bool {
        let stored = try await request.rows(
            Statement("SELECT added_factors FROM sessions WHERE id = ?", .uuid(sessionID)), { try $0.optionalText(0) })
        guard let list = stored.first ?? nil else { return false }
        return list.contains("\n\(factor)\n")
    }

    /// Revokes a session if it is still active; `true` when this call revoked it.
    @discardableResult
    static func revoke(sessionID: UUID, reason: String, now: Date, on database: any Database) async throws -> Bool {
        guard let sql = database as? any SQLDatabase else { return false }
        let rows = try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now), revoke_reason = \(bind: reason)
            WHERE id = \(bind: sessionID) AND revoked_at IS NULL RETURNING id
            """
        ).all()
        return !rows.isEmpty
    }

    /// Revokes every active session of a user but `kept` (the caller's own, when it stays);
    /// returns how many.
    static func revokeAll(
        userID: UUID, except kept: UUID? = nil, reason: String, now: Date, on database: any Database
    ) async throws -> Int {
        guard let sql = database as? any SQLDatabase else { return 0 }
        let rows = try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now), revoke_reason = \(bind: reason)
            WHERE user_id = \(bind: userID) AND revoked_at IS NULL AND id <> \(bind: kept ?? UUID()) RETURNING id
            """
        ).all()
        return rows.count
    }
}

extension Request {
    /// The database as SQL, for the atomic conditional updates Fluent's query builder cannot
    /// express: Twofold's own SQLite connection for a database file, else Fluent's database,
    /// made once per request (each `db` access builds a new handle).
    var sql: any SQLDatabase {
        get throws {
            if let cached = storage[SQLDatabaseKey.self] { return cached }
            guard let sql = twofold.sql(db) else {
                throw Abort(.internalServerError, reason: "Twofold needs an SQL database")
            }
            storage[SQLDatabaseKey.self] = sql
            return sql
        }
    }
}

private struct SQLDatabaseKey: StorageKey {
    typealias Value = any SQLDatabase
}
