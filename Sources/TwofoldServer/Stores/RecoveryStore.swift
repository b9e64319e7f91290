import Foundation
import TwofoldAPI
import TwofoldSQLite

/// An account-recovery request (`recovery_requests`). Its code, its "this wasn't me" token and
/// its pass are kept only as keyed hashes; the message and the document are sealed.
struct RecoveryRecord: Sendable, Equatable {
    var id: UUID
    /// `nil` when no account has the address typed: such a request is kept and answered like
    /// any other, and never gets past its code.
    var userID: UUID?
    var email: String
    var messageCiphertext: String
    /// As stored: `pending_email`, `pending_review`, `approved`, `denied`, `completed` or
    /// `cancelled`. An open one whose `expiresAt` has passed is `expired` (`state(at:)`).
    var state: RecoveryState
    var codeHash: String
    var codeFailures = 0
    var cancelTokenHash: String
    var passHash: String?
    var usableFrom: Date?
    var createdAt: Date
    /// When the current step runs out: the code, the review, or the pass.
    var expiresAt: Date
    var emailVerifiedAt: Date?
    var decidedAt: Date?
    var decidedBy: UUID?
    var note: String?
    var closedAt: Date?
    var ipAddress: String?
    var userAgent: String?
    /// When the owner said "this wasn't me" after the pass was used.
    var disownedAt: Date?

    /// The states in which a request still waits for something.
    static let openStates: [RecoveryState] = [.pendingEmail, .pendingReview, .approved]

    /// The state as of `now`: an open request past its time is `expired`.
    func state(at now: Date) -> RecoveryState {
        Self.openStates.contains(state) && expiresAt <= now ? .expired : state
    }
}

/// A recovery request's document, sealed.
struct RecoveryDocumentRecord: Sendable, Equatable {
    var requestID: UUID
    var contentType: String
    var bytes: Int
    var ciphertext: String
}

/// Recovery requests. Every step that must happen once (the code proven, the decision, the pass
/// used, the cancellation) is one conditional statement, so of parallel requests, on one
/// instance or several, exactly one wins.
protocol RecoveryStore: Sendable {
    func insert(_ request: RecoveryRecord, document: RecoveryDocumentRecord?) async throws
    func request(id: UUID) async throws -> RecoveryRecord?
    func request(cancelTokenHash: String) async throws -> RecoveryRecord?
    func request(passHash: String) async throws -> RecoveryRecord?
    /// Counts a wrong code on a request still waiting for its code with fewer than `maximum`
    /// wrong tries; the count after, or `nil` when there was no such request.
    func addCodeFailure(id: UUID, maximum: Int) async throws -> Int?
    /// The code proven: `pending_email` → `pending_review` (review until `reviewUntil`), if it
    /// is still waiting, in time, with fewer than `maximumFailures` wrong tries and an account.
    func proveEmail(id: UUID, now: Date, reviewUntil: Date, maximumFailures: Int) async throws -> Bool
    /// `pending_review` → `approved` (with the pass) or `denied`, if still waiting in time.
    func decide(
        id: UUID, approved: Bool, passHash: String?, usableFrom: Date?, expiresAt: Date, by admin: UUID,
        note: String, now: Date
    ) async throws -> Bool
    /// An open request → `cancelled`, if it was still open at `now`.
    func cancel(id: UUID, now: Date) async throws -> Bool
    /// `approved` → `completed` for the pass `passHash`, if it works at `now`; the request and
    /// its user when this call used it.
    func complete(passHash: String, now: Date) async throws -> (id: UUID, userID: UUID)?
    /// Marks a completed request disowned ("this wasn't me"), once; whether this call did.
    func disown(id: UUID, now: Date) async throws -> Bool
    /// How many recoveries of `userID` its owner disowned.
    func disowned(userID: UUID) async throws -> Int
    /// Whether a recovery of `userID` was completed (its pass used) after `since`, and neither
    /// disowned nor released by an administrator since (`RecoveryHold`).
    func completed(userID: UUID, since: Date) async throws -> Bool
    /// An administrator unlocked or reset `userID`: every completed recovery of the account is
    /// released from its hold. How many of them had been disowned and not released before.
    func release(userID: UUID, now: Date) async throws -> Int
    /// An administrator unlocked `userID`: the completed recoveries its owner disowned are
    /// released (a hold of one not disowned stays); how many.
    func releaseDisowned(userID: UUID, now: Date) async throws -> Int
    func document(requestID: UUID) async throws -> RecoveryDocumentRecord?
    func deleteDocument(requestID: UUID) async throws
    /// Requests of accounts in `states`, the oldest waiting first, with each account's username.
    func list(states: [RecoveryState], now: Date, offset: Int, limit: Int) async throws
        -> [(RecoveryRecord, username: String, document: (type: String, bytes: Int)?)]
    /// Deletes the documents of requests that are closed or past their time (housekeeping).
    func deleteStaleDocuments(now: Date) async throws -> Int
}

/// `RecoveryStore` on the server's database.
struct SQLRecoveryStore: RecoveryStore {
    let database: any SQLExecutor

    private static let columns = """
        id, user_id, email, message_ciphertext, state, code_hash, code_failures, cancel_token_hash, pass_hash, \
        usable_from, created_at, expires_at, email_verified_at, decided_at, decided_by, note, closed_at, \
        ip_address, user_agent, disowned_at
        """

    private static func record(_ row: StatementRow) throws -> RecoveryRecord {
        guard let state = RecoveryState(rawValue: try row.text(4)) else {
            throw StatementRowError(column: 4, reason: "is not a recovery state")
        }
        return RecoveryRecord(
            id: try row.uuid(0), userID: try row.optionalUUID(1), email: try row.text(2),
            messageCiphertext: try row.text(3), state: state, codeHash: try row.text(5),
            codeFailures: try row.integer(6), cancelTokenHash: try row.text(7), passHash: try row.optionalText(8),
            usableFrom: try row.optionalDate(9), createdAt: try row.date(10), expiresAt: try row.date(11),
            emailVerifiedAt: try row.optionalDate(12), decidedAt: try row.optionalDate(13),
            decidedBy: try row.optionalUUID(14), note: try row.optionalText(15), closedAt: try row.optionalDate(16),
            ipAddress: try row.optionalText(17), userAgent: try row.optionalText(18),
            disownedAt: try row.optionalDate(19))
    }

    private static let open = RecoveryRecord.openStates.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    func insert(_ request: RecoveryRecord, document: RecoveryDocumentRecord?) async throws {
        try await database.run(
            Statement(
                "INSERT INTO recovery_requests (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                .uuid(request.id), .uuid(request.userID), .text(request.email), .text(request.messageCiphertext),
                .text(request.state.rawValue), .text(request.codeHash), .integer(request.codeFailures),
                .text(request.cancelTokenHash), .text(request.passHash), .date(request.usableFrom),
                .date(request.createdAt), .date(request.expiresAt), .date(request.emailVerifiedAt),
                .date(request.decidedAt), .uuid(request.decidedBy), .text(request.note), .date(request.closedAt),
                .text(request.ipAddress), .text(request.userAgent), .date(request.disownedAt)))
        if let document {
            try await database.run(
                Statement(
                    "INSERT INTO recovery_documents (request_id, content_type, bytes, ciphertext) VALUES (?, ?, ?, ?)",
                    .uuid(document.requestID), .text(document.contentType), .integer(document.bytes),
                    .text(document.ciphertext)))
        }
    }

    private func one(where condition: String, _ value: Statement.Value) async throws -> RecoveryRecord? {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM recovery_requests WHERE \(condition) = ?", value), Self.record
        ).first
    }

    func request(id: UUID) async throws -> RecoveryRecord? { try await one(where: "id", .uuid(id)) }

    func request(cancelTokenHash: String) async throws -> RecoveryRecord? {
        try await one(where: "cancel_token_hash", .text(cancelTokenHash))
    }

    func request(passHash: String) async throws -> RecoveryRecord? {
        try await one(where: "pass_hash", .text(passHash))
    }

    func addCodeFailure(id: UUID, maximum: Int) async throws -> Int? {
        try await database.rows(
            Statement(
                """
                UPDATE recovery_requests SET code_failures = code_failures + 1
                WHERE id = ? AND state = 'pending_email' AND code_failures < ?
                RETURNING code_failures
                """, .uuid(id), .integer(maximum)), { try $0.integer(0) }
        ).first
    }

    func proveEmail(id: UUID, now: Date, reviewUntil: Date, maximumFailures: Int) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE recovery_requests SET state = 'pending_review', email_verified_at = ?, expires_at = ?
                WHERE id = ? AND state = 'pending_email' AND user_id IS NOT NULL AND code_failures < ?
                AND expires_at > ?
                """, .date(now), .date(reviewUntil), .uuid(id), .integer(maximumFailures), .date(now))) > 0
    }

    func decide(
        id: UUID, approved: Bool, passHash: String?, usableFrom: Date?, expiresAt: Date, by admin: UUID,
        note: String, now: Date
    ) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE recovery_requests
                SET state = ?, pass_hash = ?, usable_from = ?, expires_at = ?, decided_at = ?, decided_by = ?,
                note = ?, closed_at = ?
                WHERE id = ? AND state = 'pending_review' AND expires_at > ?
                """, .text((approved ? RecoveryState.approved : .denied).rawValue), .text(passHash),
                .date(usableFrom), .date(expiresAt), .date(now), .uuid(admin), .text(note),
                .date(approved ? nil : now), .uuid(id), .date(now))) > 0
    }

    func cancel(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE recovery_requests SET state = 'cancelled', closed_at = ?
                WHERE id = ? AND state IN (\(Self.open)) AND expires_at > ?
                """, .date(now), .uuid(id), .date(now))) > 0
    }

    func complete(passHash: String, now: Date) async throws -> (id: UUID, userID: UUID)? {
        try await database.rows(
            Statement(
                """
                UPDATE recovery_requests SET state = 'completed', closed_at = ?
                WHERE pass_hash = ? AND state = 'approved' AND expires_at > ? AND usable_from <= ?
                AND user_id IS NOT NULL
                RETURNING id, user_id
                """, .date(now), .text(passHash), .date(now), .date(now)), { (try $0.uuid(0), try $0.uuid(1)) }
        ).first
    }

    func disown(id: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE recovery_requests SET disowned_at = ? WHERE id = ? AND state = 'completed' AND disowned_at IS NULL",
                .date(now), .uuid(id))) > 0
    }

    func disowned(userID: UUID) async throws -> Int {
        try await database.count(
            Statement("SELECT id FROM recovery_requests WHERE user_id = ? AND disowned_at IS NOT NULL", .uuid(userID)))
    }

    func completed(userID: UUID, since: Date) async throws -> Bool {
        try await database.count(
            Statement(
                """
                SELECT id FROM recovery_requests WHERE user_id = ? AND state = 'completed' AND closed_at > ?
                AND disowned_at IS NULL AND released_at IS NULL LIMIT 1
                """, .uuid(userID), .date(since))) > 0
    }

    func release(userID: UUID, now: Date) async throws -> Int {
        try await database.rows(
            Statement(
                """
                UPDATE recovery_requests SET released_at = ?
                WHERE user_id = ? AND state = 'completed' AND released_at IS NULL
                RETURNING disowned_at
                """, .date(now), .uuid(userID)), { try $0.optionalDate(0) }
        ).compactMap { $0 }.count
    }

    func releaseDisowned(userID: UUID, now: Date) async throws -> Int {
        try await database.changes(
            Statement(
                """
                UPDATE recovery_requests SET released_at = ?
                WHERE user_id = ? AND state = 'completed' AND released_at IS NULL AND disowned_at IS NOT NULL
                """, .date(now), .uuid(userID)))
    }

    func document(requestID: UUID) async throws -> RecoveryDocumentRecord? {
        try await database.rows(
            Statement(
                "SELECT request_id, content_type, bytes, ciphertext FROM recovery_documents WHERE request_id = ?",
                .uuid(requestID)),
            {
                RecoveryDocumentRecord(
                    requestID: try $0.uuid(0), contentType: try $0.text(1), bytes: try $0.integer(2),
                    ciphertext: try $0.text(3))
            }
        ).first
    }

    func deleteDocument(requestID: UUID) async throws {
        try await database.run(Statement("DELETE FROM recovery_documents WHERE request_id = ?", .uuid(requestID)))
    }

    func list(states: [RecoveryState], now: Date, offset: Int, limit: Int) async throws
        -> [(RecoveryRecord, username: String, document: (type: String, bytes: Int)?)]
    {
        let wanted = states.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        let columns = Self.columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespaces) }
        return try await database.rows(
            Statement(
                """
                SELECT \(columns.joined(separator: ", ")), u.username, d.content_type, d.bytes
                FROM recovery_requests r JOIN users u ON u.id = r.user_id
                LEFT JOIN recovery_documents d ON d.request_id = r.id
                WHERE r.state IN (\(wanted)) AND r.expires_at > ?
                ORDER BY r.created_at ASC LIMIT ? OFFSET ?
                """, .date(now), .integer(limit), .integer(offset))
        ) { row in
            let record = try Self.record(row)
            let document: (type: String, bytes: Int)? = try row.optionalText(21).map { ($0, try row.integer(22)) }
            return (record, try row.text(20), document)
        }
    }

    func deleteStaleDocuments(now: Date) async throws -> Int {
        try await database.changes(
            Statement(
                """
                DELETE FROM recovery_documents WHERE request_id IN (
                    SELECT id FROM recovery_requests
                    WHERE state NOT IN ('pending_email', 'pending_review') OR expires_at <= ?)
                """, .date(now)))
    }
}
