import Foundation
import TwofoldSQLite

/// A registered passkey (`passkey_credentials`).
struct PasskeyRecord: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    /// The credential ID, base64url without padding: how clients name it.
    var credentialID: String
    var name: String
    /// The COSE public key, base64url.
    var publicKey: String
    var algorithm: Int
    var signCount: Int
    /// The authenticator model, as a lowercase UUID string (all zeros when not said).
    var aaguid: String
    /// BE and BS as of the latest ceremony.
    var backupEligible: Bool
    var backedUp: Bool
    var transports: [String]
    var attestationFormat: String
    /// `none`, `self`, `verified` or `unverified`.
    var attestationTrust: String
    var createdAt: Date
    var lastUsedAt: Date?
}

/// A challenge of a passkey ceremony (`webauthn_challenges`): 32 random bytes, used once.
struct PasskeyChallengeRecord: Sendable, Equatable {
    enum Purpose: String, Sendable {
        /// Registering a passkey for `userID`.
        case registration
        /// The second step of the login flow `flowID` of `userID`.
        case loginFlow = "login_flow"
        /// A step-up of `userID`.
        case stepUp = "step_up"
        /// A passwordless sign-in: no user until the assertion names one.
        case signIn = "sign_in"
    }

    var id: UUID
    /// base64url of the 32 bytes, as the client data carries it.
    var challenge: String
    var purpose: Purpose
    var userID: UUID?
    var flowID: UUID?
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
}

/// Passkeys and their challenges. A challenge is claimed, and a credential's counter moved, each
/// with one conditional update.
protocol PasskeyStore: Sendable {
    /// The user's passkeys in the order they were registered.
    func credentials(userID: UUID) async throws -> [PasskeyRecord]
    func credential(id credentialID: String) async throws -> PasskeyRecord?
    /// Writes a new passkey, while `addedBy` is live (`AddingSession`; throws its `ended` when it
    /// is not); `false` when its credential ID is already registered.
    func insert(_ credential: PasskeyRecord, addedBy: AddingSession?) async throws -> Bool
    /// Renames `userID`'s passkey; whether it exists.
    func rename(_ credentialID: String, userID: UUID, to name: String) async throws -> Bool
    /// Deletes `userID`'s passkey; whether this call did.
    func delete(_ credentialID: String, userID: UUID) async throws -> Bool
    /// Records a use: the new counter and backup state, only while the counter is still
    /// `previousCount` (a parallel use that moved it first wins). Whether this call did.
    func recordUse(
        _ credentialID: String, previousCount: Int, signCount: Int, backupEligible: Bool, backedUp: Bool, now: Date
    ) async throws -> Bool

    /// Writes a challenge and retires the user's other open challenges of the same purpose and
    /// login flow: one live challenge per (user, purpose, flow), replaced rather than added
    /// (issue T). A passwordless challenge names no user and replaces nothing.
    func insertChallenge(_ challenge: PasskeyChallengeRecord) async throws
    func challenge(_ challenge: String) async throws -> PasskeyChallengeRecord?
    /// Uses the challenge up if it is unused and alive at `now`; whether this call did.
    func claimChallenge(id: UUID, now: Date) async throws -> Bool
    /// Deletes challenges that expired by `before` (housekeeping).
    func deleteChallenges(expiredBefore before: Date) async throws
}

/// `PasskeyStore` on the server's database.
struct SQLPasskeyStore: PasskeyStore {
    let database: any SQLExecutor

    private static let columns = """
        id, user_id, credential_id, name, public_key, algorithm, sign_count, aaguid, backup_eligible, backed_up, \
        transports, attestation_format, attestation_trust, created_at, last_used_at
        """

    private static func credential(_ row: StatementRow) throws -> PasskeyRecord {
        let transports = try row.text(10)
        return PasskeyRecord(
            id: try row.uuid(0), userID: try row.uuid(1), credentialID: try row.text(2), name: try row.text(3),
            publicKey: try row.text(4), algorithm: try row.integer(5), signCount: try row.integer(6),
            aaguid: try row.text(7), backupEligible: try row.bool(8), backedUp: try row.bool(9),
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init),
            attestationFormat: try row.text(11), attestationTrust: try row.text(12), createdAt: try row.date(13),
            lastUsedAt: try row.optionalDate(14))
    }

    func credentials(userID: UUID) async throws -> [PasskeyRecord] {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM passkey_credentials WHERE user_id = ? ORDER BY created_at, id",
                .uuid(userID)), Self.credential)
    }

    func credential(id credentialID: String) async throws -> PasskeyRecord? {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM passkey_credentials WHERE credential_id = ?", .text(credentialID)),
            Self.credential
        ).first
    }

    func insert(_ credential: PasskeyRecord, addedBy: AddingSession?) async throws -> Bool {
        // Booleans as literals: 0/1 in SQLite, booleans in PostgreSQL.
        let insert = Statement(
            """
            INSERT INTO passkey_credentials (\(Self.columns))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, \(credential.backupEligible), \(credential.backedUp), ?, ?, ?, ?, ?)
            """, .uuid(credential.id), .uuid(credential.userID), .text(credential.credentialID),
            .text(credential.name), .text(credential.publicKey), .integer(credential.algorithm),
            .integer(credential.signCount), .text(credential.aaguid),
            .text(credential.transports.joined(separator: ",")), .text(credential.attestationFormat),
            .text(credential.attestationTrust), .date(credential.createdAt), .date(credential.lastUsedAt))
        return try await database.changes(inserting: insert, suffix: " ON CONFLICT DO NOTHING", whileLive: addedBy) > 0
    }

    func rename(_ credentialID: String, userID: UUID, to name: String) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE passkey_credentials SET name = ? WHERE credential_id = ? AND user_id = ?", .text(name),
                .text(credentialID), .uuid(userID))) > 0
    }

    func delete(_ credentialID: String, userID: UUID) async throws -> Bool {
        try await database.changes(
            Statement(
                "DELETE FROM passkey_credentials WHERE credential_id = ? AND user_id = ?", .text(credentialID),
                .uuid(userID))) > 0
    }

    func recordUse(
        _ credentialID: String, previousCount: Int, signCount: Int, backupEligible: Bool, backedUp: Bool, now: Date
    ) async throws -> Bool {
        try await database.changes(
            Self.recordingUse(
                credentialID, previousCount: previousCount, signCount: signCount, backupEligible: backupEligible,
                backedUp: backedUp, now: now)) > 0
    }

    /// `recordUse`'s statement (ends in its `WHERE` clause: `PasskeySignInStore` adds a
    /// condition). Booleans as numbers compared with 0: 0/1 in SQLite, booleans in PostgreSQL.
    static func recordingUse(
        _ credentialID: String, previousCount: Int, signCount: Int, backupEligible: Bool, backedUp: Bool, now: Date
    ) -> Statement {
        Statement(
            """
            UPDATE passkey_credentials
            SET sign_count = ?, backup_eligible = (? <> 0), backed_up = (? <> 0), last_used_at = ?
            WHERE credential_id = ? AND sign_count = ?
            """, .integer(signCount), .integer(backupEligible ? 1 : 0), .integer(backedUp ? 1 : 0), .date(now),
            .text(credentialID), .integer(previousCount))
    }

    private static let challengeColumns = "id, challenge, purpose, user_id, flow_id, created_at, expires_at, used_at"

    func insertChallenge(_ challenge: PasskeyChallengeRecord) async throws {
        try await database.run(
            Statement(
                "INSERT INTO webauthn_challenges (\(Self.challengeColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                .uuid(challenge.id), .text(challenge.challenge), .text(challenge.purpose.rawValue),
                .uuid(challenge.userID), .uuid(challenge.flowID), .date(challenge.createdAt),
                .date(challenge.expiresAt), .date(challenge.usedAt)))
        guard let userID = challenge.userID else { return }
        let sameFlow = challenge.flowID == nil ? "flow_id IS NULL" : "flow_id = ?"
        try await database.run(
            Statement(
                """
                UPDATE webauthn_challenges SET used_at = ?
                WHERE user_id = ? AND purpose = ? AND \(sameFlow) AND id <> ? AND used_at IS NULL
                """,
                [.date(challenge.createdAt), .uuid(userID), .text(challenge.purpose.rawValue)]
                    + (challenge.flowID.map { [.uuid($0)] } ?? []) + [.uuid(challenge.id)]))
    }

    func challenge(_ challenge: String) async throws -> PasskeyChallengeRecord? {
        try await database.rows(
            Statement("SELECT \(Self.challengeColumns) FROM webauthn_challenges WHERE challenge = ?", .text(challenge))
        ) { row in
            guard let purpose = PasskeyChallengeRecord.Purpose(rawValue: try row.text(2)) else {
                throw StatementRowError(column: 2, reason: "is not a challenge purpose")
            }
            return PasskeyChallengeRecord(
                id: try row.uuid(0), challenge: try row.text(1), purpose: purpose, userID: try row.optionalUUID(3),
                flowID: try row.optionalUUID(4), createdAt: try row.date(5), expiresAt: try row.date(6),
                usedAt: try row.optionalDate(7))
        }.first
    }

    func claimChallenge(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(Self.claimingChallenge(id: id, now: now)) > 0
    }

    /// `claimChallenge`'s statement (ends in its `WHERE` clause: `PasskeySignInStore` adds a
    /// condition).
    static func claimingChallenge(id: UUID, now: Date) -> Statement {
        Statement(
            "UPDATE webauthn_challenges SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?",
            .date(now), .uuid(id), .date(now))
    }

    func deleteChallenges(expiredBefore before: Date) async throws {
        try await database.run(Statement("DELETE FROM webauthn_challenges WHERE expires_at <= ?", .date(before)))
    }
}
