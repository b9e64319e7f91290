import Fluent
import Foundation
import TwofoldAPI
import TwofoldSQLite

/// An "Approve on your phone" request (`push_approvals`, issue Z).
struct PushApprovalRecord: Sendable, Equatable {
    /// What an approval completes.
    enum Purpose: String, Sendable {
        /// A login flow's second step (`flowID` is the flow).
        case signIn = "sign_in"
        /// A step-up of a signed-in session (`flowID` is the session).
        case stepUp = "step_up"

        /// As the phone is told it (`PushApprovalDTO.purpose`) and its digest covers it.
        var wire: String { self == .signIn ? "signIn" : "stepUp" }
    }

    var id: UUID
    var userID: UUID
    /// The login flow it completes, or the session it steps up (`purpose`).
    var flowID: UUID
    /// The number on the signing-in screen.
    var number: Int
    /// The three numbers the phone offers, `number` among them.
    var choices: [Int]
    var asking: String
    var place: String
    /// `PushApprovalMessage.Shown.digest` of what the phone shows.
    var digest: String
    var status: PushStatus
    var createdAt: Date
    var expiresAt: Date
    var decidedAt: Date?
    var deviceID: String?
    var ipAddress: String?
    /// The public key that signed the decision.
    var signedKey: String? = nil
    var purpose: Purpose = .signIn
}

/// Approval requests. Every change of state is one conditional update: a request is decided
/// once and signs in once, however many answers or waiters race, on one instance or several.
protocol PushApprovalStore: Sendable {
    /// Ends the account's waiting request (`replaced`) and stores `request` in its place, when
    /// fewer than `budget` requests were made since `since`; whether it was stored. A request
    /// made by a parallel call at the same moment refuses this one (`409`): one waits at a time.
    func open(_ request: PushApprovalRecord, budget: Int, since: Date) async throws -> Bool
    func request(id: UUID) async throws -> PushApprovalRecord?
    /// The account's waiting requests that have not expired at `now` (at most one).
    func pending(userID: UUID, now: Date) async throws -> [PushApprovalRecord]
    /// How many requests the account made since `since`.
    func made(userID: UUID, since: Date) async throws -> Int
    /// Sets a waiting, unexpired request's decision, signed by `key` of `deviceID`; whether this
    /// call did.
    func decide(id: UUID, userID: UUID, status: PushStatus, deviceID: String, key: String, now: Date) async throws
        -> Bool
    /// Marks an approved request of `purpose` for the flow or session `flowID` used; whether
    /// this call did.
    func use(id: UUID, flowID: UUID, purpose: PushApprovalRecord.Purpose, now: Date) async throws -> Bool
    /// The statuses of the account's latest decided requests, newest first, with when.
    func decisions(userID: UUID, limit: Int) async throws -> [(status: PushStatus, at: Date)]
    /// The requests made or decided since `since` (another instance's, for its waiters).
    func changed(since: Date) async throws -> [(id: UUID, userID: UUID)]
    /// Deletes requests that ended before `before` (housekeeping).
    func deleteEnded(before: Date) async throws
}

/// `PushApprovalStore` on the server's database.
struct SQLPushApprovalStore: PushApprovalStore {
    let database: any SQLExecutor

    private static let columns = """
        id, user_id, flow_id, number, choices, asking, place, digest, status, created_at, expires_at, \
        decided_at, device_id, ip_address, signed_key, purpose
        """

    func open(_ request: PushApprovalRecord, budget: Int, since: Date) async throws -> Bool {
        // Replaced only when the new one will be stored: a request over the budget leaves the
        // waiting one as it was.
        try await database.run(
            Statement(
                """
                UPDATE push_approvals SET status = ?, decided_at = ? WHERE user_id = ? AND status = ?
                  AND (SELECT COUNT(*) FROM push_approvals AS made WHERE made.user_id = ? AND made.created_at > ?) < ?
                """, .text(PushStatus.replaced.rawValue), .date(request.createdAt), .uuid(request.userID),
                .text(PushStatus.pending.rawValue), .uuid(request.userID), .date(since), .integer(budget)))
        let insert = Statement(
            """
            INSERT INTO push_approvals (\(Self.columns))
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
            WHERE (SELECT COUNT(*) FROM push_approvals WHERE user_id = ? AND created_at > ?) < ?
            """,
            .uuid(request.id), .uuid(request.userID), .uuid(request.flowID), .integer(request.number),
            .text(request.choices.map(String.init).joined(separator: ",")), .text(request.asking),
            .text(request.place), .text(request.digest), .text(request.status.rawValue), .date(request.createdAt),
            .date(request.expiresAt), .date(request.decidedAt), .text(request.deviceID), .text(request.ipAddress),
            .text(request.signedKey), .text(request.purpose.rawValue), .uuid(request.userID), .date(since),
            .integer(budget))
        do {
            return try await database.changes(insert) > 0
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw Problem(
                status: 409, code: .conflict, title: "Another request is waiting",
                detail: "Another approval request for this account was made at the same moment. Try again.")
        }
    }

    func request(id: UUID) async throws -> PushApprovalRecord? {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM push_approvals WHERE id = ?", .uuid(id)), Self.record
        ).first
    }

    func pending(userID: UUID, now: Date) async throws -> [PushApprovalRecord] {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM push_approvals WHERE user_id = ? AND status = ? AND expires_at > ?",
                .uuid(userID), .text(PushStatus.pending.rawValue), .date(now)), Self.record)
    }

    func made(userID: UUID, since: Date) async throws -> Int {
        try await database.count(
            Statement(
                "SELECT id FROM push_approvals WHERE user_id = ? AND created_at > ?", .uuid(userID), .date(since)))
    }

    func decide(id: UUID, userID: UUID, status: PushStatus, deviceID: String, key: String, now: Date) async throws
        -> Bool
    {
        try await database.changes(
            Statement(
                """
                UPDATE push_approvals SET status = ?, decided_at = ?, device_id = ?, signed_key = ?
                WHERE id = ? AND user_id = ? AND status = ? AND expires_at > ?
                """, .text(status.rawValue), .date(now), .text(deviceID), .text(key), .uuid(id), .uuid(userID),
                .text(PushStatus.pending.rawValue), .date(now))) > 0
    }

    func use(id: UUID, flowID: UUID, purpose: PushApprovalRecord.Purpose, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                UPDATE push_approvals SET status = ?, decided_at = ?
                WHERE id = ? AND flow_id = ? AND purpose = ? AND status = ?
                """, .text(PushStatus.used.rawValue), .date(now), .uuid(id), .uuid(flowID),
                .text(purpose.rawValue), .text(PushStatus.approved.rawValue))) > 0
    }

    func decisions(userID: UUID, limit: Int) async throws -> [(status: PushStatus, at: Date)] {
        // Replaced requests were nobody's answer: only the phone's decisions count.
        try await database.rows(
            Statement(
                """
                SELECT status, decided_at FROM push_approvals
                WHERE user_id = ? AND device_id IS NOT NULL AND decided_at IS NOT NULL
                ORDER BY decided_at DESC LIMIT ?
                """, .uuid(userID), .integer(limit)),
            { row in (PushStatus(rawValue: try row.text(0)), try row.date(1)) })
    }

    func changed(since: Date) async throws -> [(id: UUID, userID: UUID)] {
        try await database.rows(
            Statement(
                "SELECT id, user_id FROM push_approvals WHERE created_at > ? OR decided_at > ?", .date(since),
                .date(since)),
            { row in (try row.uuid(0), try row.uuid(1)) })
    }

    func deleteEnded(before: Date) async throws {
        try await database.run(Statement("DELETE FROM push_approvals WHERE expires_at <= ?", .date(before)))
    }

    private static func record(_ row: StatementRow) throws -> PushApprovalRecord {
        let choices = try row.text(4).split(separator: ",").compactMap { Int($0) }
        return PushApprovalRecord(
            id: try row.uuid(0), userID: try row.uuid(1), flowID: try row.uuid(2), number: try row.integer(3),
            choices: choices, asking: try row.text(5), place: try row.text(6), digest: try row.text(7),
            status: PushStatus(rawValue: try row.text(8)), createdAt: try row.date(9), expiresAt: try row.date(10),
            decidedAt: try row.optionalDate(11), deviceID: try row.optionalText(12),
            ipAddress: try row.optionalText(13),
            signedKey: try row.optionalText(14),
            purpose: PushApprovalRecord.Purpose(rawValue: try row.text(15)) ?? .signIn)
    }
}
