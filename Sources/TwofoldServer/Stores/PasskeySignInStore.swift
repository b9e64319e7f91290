import Foundation
import PostgresNIO
import TwofoldSQLite

/// What a second step with a passkey writes once its assertion verified: the flow consumed, the
/// challenge used up, the passkey's counter and backup state moved on from what was read, the
/// session with its first refresh token, and the sign-in's audit event.
struct PasskeySignIn: Sendable {
    let flowID: UUID
    let challengeID: UUID
    let credentialID: String
    /// The counter read with the passkey: the update is refused when a parallel use moved it.
    let previousCount: Int
    let signCount: Int
    let backupEligible: Bool
    let backedUp: Bool
    let now: Date
    let session: SessionRecord
    let refreshToken: RefreshTokenRecord
    let audit: AuditEntry
}

/// What `PasskeySignInStore.complete` did.
enum PasskeySignInOutcome: Sendable, Equatable {
    /// Everything was written.
    case signedIn
    /// Nothing was written: the flow was used, expired or its user locked.
    case flowUnavailable
    /// Nothing was written: the flow was there, but the challenge was used or expired, or the
    /// passkey's counter moved meanwhile.
    case assertionRefused
}

/// The writes of a passkey second step as one statement, all or nothing, where the database can
/// run them so (`SQLPasskeySignInStore`, on PostgreSQL).
protocol PasskeySignInStore: Sendable {
    func complete(_ signIn: PasskeySignIn) async throws -> PasskeySignInOutcome
}

/// `PasskeySignInStore` on PostgreSQL: data-modifying `WITH` clauses, one round trip and one
/// commit instead of eight of each, as `SQLCodeSignInStore` does for a code. The flow is
/// claimed; the challenge only with the flow claimed; the counter only with the challenge; the
/// session, token and event only with the counter. A flow claimed whose challenge or counter
/// was not ends the statement with a division by zero, which undoes the claim.
struct SQLPasskeySignInStore: PasskeySignInStore {
    let database: any SQLExecutor

    func complete(_ signIn: PasskeySignIn) async throws -> PasskeySignInOutcome {
        let counts: [(flow: Int, counter: Int)]
        do {
            counts = try await database.rows(Self.statement(signIn)) { (try $0.integer(0), try $0.integer(1)) }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == SQLCodeSignInStore.divisionByZero {
            return .assertionRefused
        }
        guard let claimed = counts.first, claimed.flow == 1 else { return .flowUnavailable }
        return claimed.counter == 1 ? .signedIn : .assertionRefused
    }

    static func statement(_ signIn: PasskeySignIn) -> Statement {
        let pieces = Pieces(signIn)
        return Statement(sql, pieces.claims.flatMap(\.values) + pieces.inserts.flatMap(\.values)).named(name)
    }

    /// The statement's name, under which PostgreSQL prepares it once per connection.
    static let name = "twofold_passkey_sign_in"

    /// The statement's text and the types of its values, the same for every sign-in.
    static var text: (sql: String, types: [Statement.Value]) { (sql, template.values) }

    /// The stores' statements the statement is made of, in the order of its placeholders.
    private struct Pieces {
        /// The flow consumed, the challenge used up, the counter moved (each an `UPDATE` ending
        /// in its `WHERE` clause).
        let claims: [Statement]
        /// The session, its first refresh token, the audit event.
        let inserts: [Statement]

        init(_ signIn: PasskeySignIn) {
            claims = [
                SQLLoginFlowStore.consuming(flowID: signIn.flowID, now: signIn.now),
                SQLPasskeyStore.claimingChallenge(id: signIn.challengeID, now: signIn.now),
                SQLPasskeyStore.recordingUse(
                    signIn.credentialID, previousCount: signIn.previousCount, signCount: signIn.signCount,
                    backupEligible: signIn.backupEligible, backedUp: signIn.backedUp, now: signIn.now),
            ]
            inserts = [
                SQLSessionStore.inserting(signIn.session), SQLSessionStore.inserting(signIn.refreshToken),
                SQLAuditStore.inserting(signIn.audit),
            ]
        }
    }

    /// A sign-in, any: every one has the same statement text and value types.
    private static let sample: PasskeySignIn = {
        let now = Date(timeIntervalSince1970: 0)
        let id = UUID()
        return PasskeySignIn(
            flowID: id, challengeID: id, credentialID: "", previousCount: 0, signCount: 0, backupEligible: false,
            backedUp: false, now: now,
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
        let (flow, challenge, counter) = (pieces.claims[0], pieces.claims[1], pieces.claims[2])
        var sql = """
            WITH flow AS (\(flow.sql) RETURNING 1),
            challenge AS (\(challenge.sql) AND EXISTS (SELECT 1 FROM flow) RETURNING 1),
            counter AS (\(counter.sql) AND EXISTS (SELECT 1 FROM challenge) RETURNING 1)
            """
        for (index, insert) in pieces.inserts.enumerated() {
            sql += """
                ,
                written\(index) AS (\(SQLCodeSignInStore.conditional(insert)) WHERE EXISTS (SELECT 1 FROM counter) RETURNING 1)
                """
        }
        sql += """

            SELECT (SELECT COUNT(*) FROM flow), (SELECT COUNT(*) FROM counter),
              1 / (CASE WHEN EXISTS (SELECT 1 FROM flow) AND NOT EXISTS (SELECT 1 FROM counter) THEN 0 ELSE 1 END)
            """
        return sql
    }()
}

extension SQLPasskeySignInStore {
    /// The statement as PostgreSQL prepares it.
    enum PostgresText: PreparedText {
        static let name = SQLPasskeySignInStore.name
        static let sql = PostgresStatements.numbered(SQLPasskeySignInStore.text.sql)
        static let types = PostgresStatements.types(SQLPasskeySignInStore.text.types)
    }
}
