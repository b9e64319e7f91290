import Foundation
import TwofoldSQLite

/// A sign-in waiting for its second step (`login_flows`; `otpFlowId` / `tempToken`). The token the
/// client holds is stored only as a hash; the flow belongs to one user and is consumed once.
struct LoginFlowRecord: Sendable, Equatable {
    var id: UUID
    var tokenHash: String
    var userID: UUID
    /// The factor already proven, as an RFC 8176 value (`pwd`).
    var firstFactor: String
    var createdAt: Date
    var expiresAt: Date
    var consumedAt: Date?
    var ipAddress: String?
    /// The account's `SessionEpoch` read with the password: the flow is usable only while the
    /// account's is not past it, and its session and remembered device keep it.
    var sessionEpoch: Int = 0
}

/// Login flows. Consuming one is a single conditional update, so of any number of parallel
/// second steps on one flow exactly one wins.
protocol LoginFlowStore: Sendable {
    func insert(_ flow: LoginFlowRecord) async throws
    /// Many flows at once (`twofold-server bench-seed`), a few hundred to a statement.
    func insert(_ flows: [LoginFlowRecord]) async throws
    func flow(tokenHash: String) async throws -> LoginFlowRecord?
    /// The flow with its user and the user's active authenticator-app secret, in one read of the
    /// last committed state (`SQLExecutor.readCommitted`).
    func pending(tokenHash: String) async throws -> PendingSecondStep?
    /// Consumes the flow at `now` if it is not consumed, not expired, its user is active and the
    /// user's `SessionEpoch` is not past the flow's; whether this call did.
    func consume(flowID: UUID, now: Date) async throws -> Bool
    /// Gives back the claim `consume` made at `claimedAt` (and only that one).
    func release(flowID: UUID, claimedAt: Date) async throws
    /// Ends the flow for good at `now`: consumed if it was not, and expired, which no `release`
    /// of a claim racing this undoes ("This wasn't me").
    func end(flowID: UUID, now: Date) async throws
    /// Deletes flows that expired by `before` (housekeeping).
    func deleteExpired(before: Date) async throws

}

/// `LoginFlowStore` on the server's database.
struct SQLLoginFlowStore: LoginFlowStore {
    let database: any SQLExecutor

    private static let columns =
        "id, token_hash, user_id, first_factor, created_at, expires_at, consumed_at, ip_address, session_epoch"

    private static func values(_ flow: LoginFlowRecord) -> [Statement.Value] {
        [
            .uuid(flow.id), .text(flow.tokenHash), .uuid(flow.userID), .text(flow.firstFactor), .date(flow.createdAt),
            .date(flow.expiresAt), .date(flow.consumedAt), .text(flow.ipAddress), .integer(flow.sessionEpoch),
        ]
    }

    func insert(_ flow: LoginFlowRecord) async throws { try await insert([flow]) }

    func insert(_ flows: [LoginFlowRecord]) async throws {
        try await database.insert(into: "login_flows", columns: Self.columns, rows: flows.map(Self.values))
    }

    func flow(tokenHash: String) async throws -> LoginFlowRecord? {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM login_flows WHERE token_hash = ?", .text(tokenHash)),
            {
                LoginFlowRecord(
                    id: try $0.uuid(0), tokenHash: try $0.text(1), userID: try $0.uuid(2), firstFactor: try $0.text(3),
                    createdAt: try $0.date(4), expiresAt: try $0.date(5), consumedAt: try $0.optionalDate(6),
                    ipAddress: try $0.optionalText(7), sessionEpoch: try $0.integer(8))
            }
        ).first
    }

    func pending(tokenHash: String) async throws -> PendingSecondStep? {
        try await database.readCommitted(PendingSecondStep.query(tokenHash: tokenHash), PendingSecondStep.init)
            .first
    }

    func consume(flowID: UUID, now: Date) async throws -> Bool {
        try await database.changes(Self.consuming(flowID: flowID, now: now)) > 0
    }

    /// Consumes the flow if it is unconsumed, unexpired, its user active and no end of every
    /// session overtook it (ends in its `WHERE` clause: `CodeSignInStore` adds conditions).
    static func consuming(flowID: UUID, now: Date) -> Statement {
        Statement(
            """
            UPDATE login_flows SET consumed_at = ?
            WHERE id = ? AND consumed_at IS NULL AND expires_at > ?
              AND EXISTS (SELECT 1 FROM users WHERE users.id = login_flows.user_id AND users.status = 'active')
              AND \(SessionEpoch.current("login_flows"))
            """, .date(now), .uuid(flowID), .date(now))
    }

    func release(flowID: UUID, claimedAt: Date) async throws {
        try await database.run(
            Statement(
                "UPDATE login_flows SET consumed_at = NULL WHERE id = ? AND consumed_at = ?", .uuid(flowID),
                .date(claimedAt)))
    }

    func end(flowID: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                """
                UPDATE login_flows SET consumed_at = COALESCE(consumed_at, ?), expires_at = ?
                WHERE id = ? AND expires_at > ?
                """, .date(now), .date(now), .uuid(flowID), .date(now)))
    }

    func deleteExpired(before: Date) async throws {
        try await database.run(Statement("DELETE FROM login_flows WHERE expires_at <= ?", .date(before)))
    }
}
