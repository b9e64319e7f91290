import Foundation
import TwofoldSQLite

/// A secret as codes are checked against it: plain values, from a stored credential or read
/// with the login flow (`PendingSecondStep`). `TOTPService` checks codes against it.
struct TOTPSecret: Sendable {
    let id: UUID
    let userID: UUID
    /// As `TOTPCredentialRecord.secretCiphertext`.
    let ciphertext: String
    let algorithm: String
    let digits: Int
    let period: Int
    let lastUsedStep: Int64?
}

extension TOTPSecret {
    init(_ credential: TOTPCredentialRecord) {
        self.init(
            id: credential.id, userID: credential.userID, ciphertext: credential.secretCiphertext,
            algorithm: credential.algorithm, digits: credential.digits, period: credential.period,
            lastUsedStep: credential.lastUsedStep)
    }
}

/// A user's authenticator-app secret (`totp_credentials`): pending after setup, active once a code
/// confirmed it. The secret is stored only encrypted (AES-GCM, key outside the database).
struct TOTPCredentialRecord: Sendable, Equatable {
    enum Status: String, Sendable { case pending, active }

    var id: UUID
    var userID: UUID
    var status: Status
    /// base64 of AES-GCM `nonce ‖ ciphertext ‖ tag`, bound to the user id as associated data.
    var secretCiphertext: String
    var algorithm = "SHA1"
    var digits = 6
    var period = 30
    var createdAt: Date
    /// When a pending secret is discarded.
    var expiresAt: Date
    var confirmedAt: Date?
    /// The last time step accepted; a step is never accepted twice (RFC 6238 §5.2).
    var lastUsedStep: Int64?
}

/// Authenticator-app secrets. Claiming a time step and confirming a pending secret are each one
/// conditional update.
protocol TOTPCredentialStore: Sendable {
    func credential(userID: UUID, status: TOTPCredentialRecord.Status) async throws -> TOTPCredentialRecord?
    /// Removes the user's secrets, pending or active; how many.
    @discardableResult
    func deleteAll(userID: UUID) async throws -> Int
    /// Replaces the user's pending secret with `pending` (two statements); an active one stays.
    func replace(with pending: TOTPCredentialRecord) async throws
    /// Sets the last used step to `step` if it is after the one stored; whether this call did.
    func claimStep(_ step: Int64, credentialID: UUID) async throws -> Bool
    /// Makes a pending secret active at `now`, while `addedBy` is live (throws
    /// `AddingSession.ended` when it is not); whether this call did.
    func activate(credentialID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool
    /// Many at once (`twofold-server bench-seed`).
    func insert(_ credentials: [TOTPCredentialRecord]) async throws
    /// Deletes pending secrets not confirmed by `now` (housekeeping).
    func deleteExpiredPending(now: Date) async throws

}

/// `TOTPCredentialStore` on the server's database.
struct SQLTOTPCredentialStore: TOTPCredentialStore {
    let database: any SQLExecutor

    private static let columns =
        "id, user_id, status, secret_ciphertext, algorithm, digits, period, created_at, expires_at, confirmed_at, last_used_step"

    private static func record(_ row: StatementRow) throws -> TOTPCredentialRecord {
        guard let status = TOTPCredentialRecord.Status(rawValue: try row.text(2)) else {
            throw StatementRowError(column: 2, reason: "is not a TOTP credential status")
        }
        return TOTPCredentialRecord(
            id: try row.uuid(0), userID: try row.uuid(1), status: status, secretCiphertext: try row.text(3),
            algorithm: try row.text(4), digits: try row.integer(5), period: try row.integer(6),
            createdAt: try row.date(7), expiresAt: try row.date(8), confirmedAt: try row.optionalDate(9),
            lastUsedStep: try row.optionalInteger(10).map(Int64.init))
    }

    private static func values(_ credential: TOTPCredentialRecord) -> [Statement.Value] {
        [
            .uuid(credential.id), .uuid(credential.userID), .text(credential.status.rawValue),
            .text(credential.secretCiphertext), .text(credential.algorithm), .integer(credential.digits),
            .integer(credential.period), .date(credential.createdAt), .date(credential.expiresAt),
            .date(credential.confirmedAt), .integer(credential.lastUsedStep.map(Int.init)),
        ]
    }

    func credential(userID: UUID, status: TOTPCredentialRecord.Status) async throws -> TOTPCredentialRecord? {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM totp_credentials WHERE user_id = ? AND status = ?", .uuid(userID),
                .text(status.rawValue)), Self.record
        ).first
    }

    func deleteAll(userID: UUID) async throws -> Int {
        try await database.changes(Statement("DELETE FROM totp_credentials WHERE user_id = ?", .uuid(userID)))
    }

    func replace(with pending: TOTPCredentialRecord) async throws {
        try await database.run(
            Statement(
                "DELETE FROM totp_credentials WHERE user_id = ? AND status = 'pending'", .uuid(pending.userID)))
        try await insert([pending])
    }

    func claimStep(_ step: Int64, credentialID: UUID) async throws -> Bool {
        try await database.changes(Self.claimingStep(step, credentialID: credentialID)) > 0
    }

    /// Claims time step `step` if no later or equal one was used (ends in its `WHERE` clause).
    static func claimingStep(_ step: Int64, credentialID: UUID) -> Statement {
        Statement(
            """
            UPDATE totp_credentials SET last_used_step = ?
            WHERE id = ? AND (last_used_step IS NULL OR last_used_step < ?)
            """, .integer(Int(step)), .uuid(credentialID), .integer(Int(step)))
    }

    func activate(credentialID: UUID, now: Date, addedBy: AddingSession?) async throws -> Bool {
        let update = Statement(
            "UPDATE totp_credentials SET status = 'active', confirmed_at = ? WHERE id = ? AND status = 'pending'",
            .date(now), .uuid(credentialID))
        return try await database.changes(update, whileLive: addedBy) > 0
    }

    func insert(_ credentials: [TOTPCredentialRecord]) async throws {
        try await database.insert(into: "totp_credentials", columns: Self.columns, rows: credentials.map(Self.values))
    }

    func deleteExpiredPending(now: Date) async throws {
        try await database.run(
            Statement("DELETE FROM totp_credentials WHERE status = 'pending' AND expires_at <= ?", .date(now)))
    }
}
