import Foundation
import TwofoldSQLite

/// A 6-digit code sent by SMS or email (`one_time_codes`), stored only as a keyed hash.
/// `purpose` says what it proves: a login flow's second step, a new destination being enabled, a
/// step-up, a new phone or email replacing the old, or seed 004's SMS sign-in.
struct OneTimeCodeRecord: Sendable, Equatable {
    enum Purpose: String, Sendable {
        case login, enable
        case stepUp = "step_up"
        case changeDestination = "change_destination"
        /// Seed 004: an SMS code that signs a device user in (`POST /auth/request-otp`).
        case deviceSignIn = "device_sign_in"
        /// An SMS code that proves the phone beside a forgotten password's emailed link.
        case passwordReset = "password_reset"
    }

    var id: UUID
    var userID: UUID
    var channel: DeliveryChannel
    var purpose: Purpose
    var flowID: UUID?
    /// The phone number or address the code went to, encrypted (it becomes the one on file when
    /// an `enable` code is confirmed).
    var destinationCiphertext: String
    var codeHash: String
    var failures = 0
    var createdAt: Date
    var expiresAt: Date
    var usedAt: Date?
}

/// One-time codes. Using one is a single conditional update.
protocol OneTimeCodeStore: Sendable {
    /// Ends the user's unused codes of this channel and purpose (a new one replaces them).
    /// Ends the user's unused codes of this kind; with `flowID`, only that flow's.
    func supersede(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date
    ) async throws
    func insert(_ code: OneTimeCodeRecord) async throws
    /// The newest unused, unexpired code of this kind (and flow, when given) with fewer than
    /// `maximumFailures` wrong tries.
    func live(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date,
        maximumFailures: Int
    ) async throws -> OneTimeCodeRecord?
    /// The newest code of this kind, when it was used at `since` or after: a copy of it sent at
    /// once is a duplicate of that use, not a guess. A code a resend superseded is never the
    /// newest, so it never reads as used.
    func usedSince(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, since: Date
    ) async throws -> OneTimeCodeRecord?
    /// The newest code sent for a login flow, used or not.
    func latest(flowID: UUID) async throws -> OneTimeCodeRecord?
    func addFailure(id: UUID) async throws
    /// Marks the code used at `now` if it is unused and has fewer than `maximumFailures` wrong
    /// tries; whether this call did.
    func use(id: UUID, now: Date, maximumFailures: Int) async throws -> Bool
}

/// `OneTimeCodeStore` on the server's database.
struct SQLOneTimeCodeStore: OneTimeCodeStore {
    let database: any SQLExecutor

    private static let columns = """
        id, user_id, channel, purpose, flow_id, destination_ciphertext, code_hash, failures, created_at, \
        expires_at, used_at
        """

    private static func record(_ row: StatementRow) throws -> OneTimeCodeRecord {
        guard let channel = DeliveryChannel(rawValue: try row.text(2)) else {
            throw StatementRowError(column: 2, reason: "is not a channel")
        }
        guard let purpose = OneTimeCodeRecord.Purpose(rawValue: try row.text(3)) else {
            throw StatementRowError(column: 3, reason: "is not a code purpose")
        }
        return OneTimeCodeRecord(
            id: try row.uuid(0), userID: try row.uuid(1), channel: channel, purpose: purpose,
            flowID: try row.optionalUUID(4), destinationCiphertext: try row.text(5), codeHash: try row.text(6),
            failures: try row.integer(7), createdAt: try row.date(8), expiresAt: try row.date(9),
            usedAt: try row.optionalDate(10))
    }

    func supersede(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date
    ) async throws {
        try await database.run(
            Statement(
                """
                UPDATE one_time_codes SET used_at = ?
                WHERE user_id = ? AND channel = ? AND purpose = ? AND used_at IS NULL\(flowID == nil ? "" : " AND flow_id = ?")
                """,
                [.date(now), .uuid(userID), .text(channel.rawValue), .text(purpose.rawValue)]
                    + (flowID.map { [.uuid($0)] } ?? [])))
    }

    func insert(_ code: OneTimeCodeRecord) async throws {
        try await database.run(
            Statement(
                "INSERT INTO one_time_codes (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", .uuid(code.id),
                .uuid(code.userID), .text(code.channel.rawValue), .text(code.purpose.rawValue), .uuid(code.flowID),
                .text(code.destinationCiphertext), .text(code.codeHash), .integer(code.failures),
                .date(code.createdAt), .date(code.expiresAt), .date(code.usedAt)))
    }

    func live(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, now: Date,
        maximumFailures: Int
    ) async throws -> OneTimeCodeRecord? {
        let conditions = """
            user_id = ? AND channel = ? AND purpose = ? AND used_at IS NULL AND expires_at > ? AND failures < ?
            """
        var values: [Statement.Value] = [
            .uuid(userID), .text(channel.rawValue), .text(purpose.rawValue), .date(now), .integer(maximumFailures),
        ]
        var sql = "SELECT \(Self.columns) FROM one_time_codes WHERE \(conditions)"
        if let flowID {
            sql += " AND flow_id = ?"
            values.append(.uuid(flowID))
        }
        return try await database.rows(Statement(sql + " ORDER BY created_at DESC LIMIT 1", values), Self.record).first
    }

    func usedSince(
        userID: UUID, channel: DeliveryChannel, purpose: OneTimeCodeRecord.Purpose, flowID: UUID?, since: Date
    ) async throws -> OneTimeCodeRecord? {
        var sql = "SELECT \(Self.columns) FROM one_time_codes WHERE user_id = ? AND channel = ? AND purpose = ?"
        var values: [Statement.Value] = [.uuid(userID), .text(channel.rawValue), .text(purpose.rawValue)]
        if let flowID {
            sql += " AND flow_id = ?"
            values.append(.uuid(flowID))
        }
        let newest = try await database.rows(Statement(sql + " ORDER BY created_at DESC LIMIT 1", values), Self.record)
            .first
        guard let newest, let used = newest.usedAt, used >= since else { return nil }
        return newest
    }

    func latest(flowID: UUID) async throws -> OneTimeCodeRecord? {
        try await database.rows(
            Statement(
                "SELECT \(Self.columns) FROM one_time_codes WHERE flow_id = ? ORDER BY created_at DESC LIMIT 1",
                .uuid(flowID)), Self.record
        ).first
    }

    func addFailure(id: UUID) async throws {
        try await database.run(Statement("UPDATE one_time_codes SET failures = failures + 1 WHERE id = ?", .uuid(id)))
    }

    func use(id: UUID, now: Date, maximumFailures: Int) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE one_time_codes SET used_at = ? WHERE id = ? AND used_at IS NULL AND failures < ?", .date(now),
                .uuid(id), .integer(maximumFailures))) > 0
    }
}
