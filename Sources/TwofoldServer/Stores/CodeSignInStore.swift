import Foundation
import PostgresNIO
import TwofoldSQLite

/// What a second step with an authenticator-app code writes once the code was judged right for
/// `step`: the flow consumed, the time step claimed, the factor's count started again, the
/// session with its first refresh token, and the sign-in's audit event.
struct CodeSignIn: Sendable {
    let flowID: UUID
    let userID: UUID
    let credentialID: UUID
    let step: Int64
    /// `FactorGuard`'s attempts before a lock (`TWOFOLD_LOCK_AFTER_FAILURES`).
    let attemptLimit: Int
    let now: Date
    let session: SessionRecord
    let refreshToken: RefreshTokenRecord
    let audit: AuditEntry
}

/// What `CodeSignInStore.complete` did.
enum CodeSignInOutcome: Sendable, Equatable {
    /// Everything was written.
    case signedIn
    /// Nothing was written: the flow was used, expired or its user locked.
    case flowUnavailable
    /// Nothing was written: the flow was there, but the time step was used meanwhile or the
    /// factor is locked.
    case codeRefused
}

/// A wrong authenticator-app code, as `FactorGuard.begin` and `failed` record it: an attempt
/// slot taken and the failure counted toward the account's day.
struct CodeRefusal: Sendable {
    let userID: UUID
    /// The failure's row (`factor_failures`).
    let failureID: UUID
    /// `FactorGuard`'s attempts before a lock (`TWOFOLD_LOCK_AFTER_FAILURES`).
    let attemptLimit: Int
    /// Wrong codes in a day that lock the account (`TWOFOLD_ACCOUNT_LOCK_FAILURES`).
    let accountLimit: Int
    /// The start of the day the account's failures are counted over.
    let since: Date
    let now: Date
}

/// The writes of an authenticator-app second step as one statement, all or nothing, where the
/// database can run them so (`SQLCodeSignInStore`, on PostgreSQL).
protocol CodeSignInStore: Sendable {
    func complete(_ signIn: CodeSignIn) async throws -> CodeSignInOutcome
    /// Takes an attempt slot and records the failure in one statement, when that failure locks
    /// nothing: the factor has a slot left after it, and the account's day stays under its limit.
    /// The attempts used then, and the account's failures of the day counted once that
    /// statement is committed (parallel refusals each counted the day as their statement began;
    /// the last to count here sees them all); `nil` when nothing was written (the factor is
    /// closed, or this failure locks the factor or the account), for `FactorGuard` to take it
    /// step by step.
    func refuse(_ refusal: CodeRefusal) async throws -> CodeRefused?
}

/// What `CodeSignInStore.refuse` wrote and then counted.
struct CodeRefused: Sendable, Equatable {
    /// The factor's attempts, this one included.
    let attempts: Int
    /// The account's failures in the day, counted after the refusal was committed.
    let dayFailures: Int
}

/// `CodeSignInStore` on PostgreSQL: data-modifying `WITH` clauses, one round trip and one
/// commit instead of six of each. (On an SQLite file the unit of work sends them one by one
/// on the writer's thread, where a statement costs no round trip and the commit is shared.)
///
/// The statement is made of the stores' own statements (`consuming`, `claimingStep`,
/// `clearing`, `closed`, `inserting`), each condition as they state it: the flow is claimed; the
/// step only with the flow claimed and the factor not closed; the count cleared, the session,
/// token and event written only with the step claimed. A flow claimed whose step was not ends
/// the statement with an error (a division by zero in its last line), which undoes the claim:
/// the flow stays usable, as `LoginFlowService.claimed` gives it back.
struct SQLCodeSignInStore: CodeSignInStore {
    let database: any SQLExecutor

    func complete(_ signIn: CodeSignIn) async throws -> CodeSignInOutcome {
        let counts: [(flow: Int, step: Int)]
        do {
            counts = try await database.rows(Self.statement(signIn)) { (try $0.integer(0), try $0.integer(1)) }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.divisionByZero {
            return .codeRefused
        }
        guard let claimed = counts.first, claimed.flow == 1 else { return .flowUnavailable }
        return claimed.step == 1 ? .signedIn : .codeRefused
    }

    /// The refusal, then the day's failures counted afresh, on one connection.
    func refuse(_ refusal: CodeRefusal) async throws -> CodeRefused? {
        let (slots, tallies) = try await database.rows(
            Self.refusal(refusal), { try $0.integer(0) },
            then: SQLFactorGuardStore.tallying(
                userID: refusal.userID, factor: TOTPService.factor, since: refusal.since),
            { try $0.integer(0) })
        guard let attempts = slots.first else { return nil }
        return CodeRefused(attempts: attempts, dayFailures: tallies.first ?? 0)
    }

    /// `refuse`'s statement: the day's failures counted first, then the slot taken (the guard
    /// made, or its row updated as `FactorGuardStore.takeSlot` does) only when this failure is not
    /// the account's last of the day nor the factor's last before its lock, and the failure
    /// written only with the slot taken.
    static func refusal(_ refusal: CodeRefusal) -> Statement {
        Statement(
            """
            WITH day AS (SELECT COUNT(*) AS failures FROM factor_failures WHERE user_id = ? AND occurred_at > ?),
            slot AS (INSERT INTO factor_guards (user_id, factor, attempts, lockouts)
              SELECT CAST(? AS uuid), CAST(? AS text), 1, 0 WHERE (SELECT failures FROM day) + 1 < ? AND 1 < ?
              \(SQLFactorGuardStore.takingSlot)
              WHERE (factor_guards.locked_until IS NULL AND factor_guards.attempts + 1 < ?)
                OR (factor_guards.locked_until IS NOT NULL AND factor_guards.locked_until <= ?)
              RETURNING attempts),
            failure AS (INSERT INTO factor_failures (id, user_id, factor, occurred_at)
              SELECT CAST(? AS uuid), CAST(? AS uuid), CAST(? AS text), CAST(? AS timestamptz)
              WHERE EXISTS (SELECT 1 FROM slot) RETURNING 1)
            SELECT attempts FROM slot
            """, .uuid(refusal.userID), .date(refusal.since), .uuid(refusal.userID), .text(TOTPService.factor),
            .integer(refusal.accountLimit), .integer(refusal.attemptLimit), .date(refusal.now), .date(refusal.now),
            .integer(refusal.attemptLimit), .date(refusal.now), .uuid(refusal.failureID), .uuid(refusal.userID),
            .text(TOTPService.factor), .date(refusal.now)
        ).named(refusalName)
    }

    /// `refusal`'s name, under which PostgreSQL prepares it once per connection.
    static let refusalName = "twofold_code_refusal"

    /// SQLSTATE 22012, which the statement's last line raises to undo a lone flow claim.
    static let divisionByZero = "22012"

    static func statement(_ signIn: CodeSignIn) -> Statement {
        let pieces = Pieces(signIn)
        return Statement(sql, pieces.updates.flatMap(\.values) + pieces.inserts.flatMap(\.values)).named(name)
    }

    /// The statement's name, under which PostgreSQL prepares it once per connection.
    static let name = "twofold_code_sign_in"

    /// The statement's text and the types of its values, the same for every sign-in.
    static var text: (sql: String, types: [Statement.Value]) { (sql, template.values) }

    /// The stores' statements the statement is made of, in the order of its placeholders.
    private struct Pieces {
        /// The flow consumed, the factor closed, the step claimed, the count cleared.
        let updates: [Statement]
        /// The session, its first refresh token, the audit event.
        let inserts: [Statement]

        init(_ signIn: CodeSignIn) {
            updates = [
                SQLLoginFlowStore.consuming(flowID: signIn.flowID, now: signIn.now),
                SQLFactorGuardStore.closed(
                    userID: signIn.userID, factor: TOTPService.factor, limit: signIn.attemptLimit, now: signIn.now),
                SQLTOTPCredentialStore.claimingStep(signIn.step, credentialID: signIn.credentialID),
                SQLFactorGuardStore.clearing(userID: signIn.userID, factor: TOTPService.factor),
            ]
            inserts = [
                SQLSessionStore.inserting(signIn.session), SQLSessionStore.inserting(signIn.refreshToken),
                SQLAuditStore.inserting(signIn.audit),
            ]
        }
    }

    /// A sign-in, any: every one has the same statement text and value types.
    private static let sample: CodeSignIn = {
        let now = Date(timeIntervalSince1970: 0)
        let id = UUID()
        return CodeSignIn(
            flowID: id, userID: id, credentialID: id, step: 0, attemptLimit: 0, now: now,
            session: SessionRecord(
                id: id, userID: id, authTime: now, methods: [], createdAt: now, lastUsedAt: now, ipAddress: nil,
                userAgent: nil),
            refreshToken: RefreshTokenRecord(
                id: id, sessionID: id, tokenHash: "", createdAt: now, expiresAt: now, usedAt: nil),
            audit: AuditEntry(
                id: id, occurredAt: now, event: .loginSucceeded, userID: id, actorID: nil, origin: .none, detail: ""))
    }()

    private static let template = statement(sample)

    /// The statement's text, the same for every sign-in.
    private static let sql: String = {
        let pieces = Pieces(sample)
        let (consume, closed, claim, clear) = (
            pieces.updates[0], pieces.updates[1], pieces.updates[2], pieces.updates[3]
        )
        var sql = """
            WITH flow AS (\(consume.sql) RETURNING 1),
            closed AS (\(closed.sql)),
            step AS (\(claim.sql) AND EXISTS (SELECT 1 FROM flow) AND NOT EXISTS (SELECT 1 FROM closed) RETURNING 1),
            cleared AS (\(clear.sql) AND (attempts <> 0 OR lockouts <> 0 OR locked_until IS NOT NULL)
              AND EXISTS (SELECT 1 FROM step) RETURNING 1)
            """
        for (index, insert) in pieces.inserts.enumerated() {
            sql += ",\nwritten\(index) AS (\(conditional(insert)) WHERE EXISTS (SELECT 1 FROM step) RETURNING 1)"
        }
        sql += """

            SELECT (SELECT COUNT(*) FROM flow), (SELECT COUNT(*) FROM step),
              1 / (CASE WHEN EXISTS (SELECT 1 FROM flow) AND NOT EXISTS (SELECT 1 FROM step) THEN 0 ELSE 1 END)
            """
        return sql
    }()

    /// `INSERT INTO t (…) VALUES (?, …)` as `INSERT INTO t (…) SELECT CAST(? AS type), …`, to
    /// which a `WHERE` can be added. Each value is cast to its type: in a select list PostgreSQL
    /// would read a `NULL` of unknown type as text. Without `casts` (SQLite, whose `CAST` to an
    /// unknown type name would convert the value), the placeholders stay as they are.
    static func conditional(_ insert: Statement, casts: Bool = true) -> String {
        guard let values = insert.sql.range(of: "VALUES (") else {
            preconditionFailure("not an INSERT … VALUES (…): \(insert.sql)")
        }
        var list = insert.sql[values.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
        precondition(list.hasSuffix(")"), "not an INSERT … VALUES (…): \(insert.sql)")
        list.removeLast()
        var kinds = insert.values.makeIterator()
        var selected = ""
        for character in list {
            guard character == "?", casts else {
                selected.append(character)
                continue
            }
            let type: String
            switch kinds.next() {
            case .text: type = "text"
            case .integer: type = "bigint"
            case .uuid: type = "uuid"
            case .date: type = "timestamptz"
            case .double: type = "double precision"
            case nil: preconditionFailure("more placeholders than values: \(insert.sql)")
            }
            selected += "CAST(? AS \(type))"
        }
        return insert.sql[..<values.lowerBound] + "SELECT " + selected
    }
}

extension SQLCodeSignInStore {
    /// The statement as PostgreSQL prepares it.
    enum PostgresText: PreparedText {
        static let name = SQLCodeSignInStore.name
        static let sql = PostgresStatements.numbered(SQLCodeSignInStore.text.sql)
        static let types = PostgresStatements.types(SQLCodeSignInStore.text.types)
    }

    /// The wrong code's statement (`refusal`) as PostgreSQL prepares it.
    enum RefusalText: PreparedText {
        private static let sample = SQLCodeSignInStore.refusal(
            CodeRefusal(
                userID: UUID(), failureID: UUID(), attemptLimit: 0, accountLimit: 0,
                since: Date(timeIntervalSince1970: 0), now: Date(timeIntervalSince1970: 0)))
        static let name = SQLCodeSignInStore.refusalName
        static let sql = PostgresStatements.numbered(sample.sql)
        static let types = PostgresStatements.types(sample.values)
    }
}
