import Fluent
import Foundation
import TwofoldAPI
import TwofoldSQLite

/// A notice for the account's phones (`phone_notices`).
struct PhoneNoticeRecord: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    var title: String
    var body: String
    var createdAt: Date
}

/// A session as the sign-in watch reads it.
struct SignInSeen: Sendable, Equatable {
    var sessionID: UUID
    var userID: UUID
    var ipAddress: String?
    var userAgent: String?
    var createdAt: Date
}

/// Where Apple's push service reaches each phone, and the notices for an account's phones.
protocol PhoneChannelStore: Sendable {
    /// Makes `token` the address of the device row `deviceRowID` of `userID`'s: its earlier one
    /// goes, and so does the token on any other device (a phone reinstalled or handed to another
    /// account announces to its new holder only).
    func setToken(_ token: String, deviceRowID: UUID, userID: UUID, now: Date) async throws
    /// The device row's token, forgotten; whether it had one.
    func forgetToken(deviceRowID: UUID) async throws -> Bool
    /// `token` forgotten wherever it is (Apple said it is no longer valid).
    func forgetToken(_ token: String) async throws
    /// The tokens of `userID`'s devices that hold a key, the most recently set first, at most
    /// `limit`.
    func tokens(userID: UUID, limit: Int) async throws -> [String]
    /// Adds `notice`, unless one tells of `sessionID` already; whether it was added.
    func addNotice(_ notice: PhoneNoticeRecord, sessionID: UUID?) async throws -> Bool
    /// Sessions started after `after` and no later than `until` that the watch has not looked
    /// at yet, oldest first, at most `limit`.
    func uncheckedSignIns(after: Date, until: Date, limit: Int) async throws -> [SignInSeen]
    /// Marks the sessions `ids` looked at (again: nothing changes).
    func markChecked(_ ids: [UUID], now: Date) async throws
    /// Forgets the looks taken before `before`.
    func deleteChecks(before: Date) async throws
    /// `userID`'s sessions other than `except` started by `until` and started or last used from
    /// `from` on (revoked ones too), newest first, at most 500.
    func signIns(userID: UUID, from: Date, until: Date, except: UUID) async throws -> [SignInSeen]
    /// Whether `userID` has a session other than `except` started by `until`, however long ago.
    func signedInBefore(userID: UUID, until: Date, except: UUID) async throws -> Bool
    /// `userID`'s notices since `since`, newest first, at most `limit`.
    func notices(userID: UUID, since: Date, limit: Int) async throws -> [PhoneNoticeRecord]
    /// The users with a notice made after `since` (the waiters of other instances).
    func noticed(since: Date) async throws -> [UUID]
    func deleteNotices(before: Date) async throws
}

struct SQLPhoneChannelStore: PhoneChannelStore {
    let database: any SQLExecutor

    func setToken(_ token: String, deviceRowID: UUID, userID: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                "DELETE FROM push_tokens WHERE token = ? OR device_row_id = ?", .text(token), .uuid(deviceRowID)))
        do {
            try await database.run(
                Statement(
                    "INSERT INTO push_tokens (device_row_id, user_id, token, updated_at) VALUES (?, ?, ?, ?)",
                    .uuid(deviceRowID), .uuid(userID), .text(token), .date(now)))
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw Problem(
                status: 409, code: .conflict, title: "Changed at the same moment",
                detail: "This phone's notification address was set twice at once. Try again.")
        }
    }

    func forgetToken(deviceRowID: UUID) async throws -> Bool {
        try await database.changes(Statement("DELETE FROM push_tokens WHERE device_row_id = ?", .uuid(deviceRowID)))
            > 0
    }

    func forgetToken(_ token: String) async throws {
        try await database.run(Statement("DELETE FROM push_tokens WHERE token = ?", .text(token)))
    }

    func tokens(userID: UUID, limit: Int) async throws -> [String] {
        try await database.rows(
            Statement(
                """
                SELECT push_tokens.token FROM push_tokens JOIN devices ON devices.id = push_tokens.device_row_id
                WHERE push_tokens.user_id = ? AND devices.user_id = ? AND devices.method = ?
                  AND devices.public_key IS NOT NULL
                ORDER BY push_tokens.updated_at DESC LIMIT ?
                """, .uuid(userID), .uuid(userID), .text(DeviceRecord.Method.secureEnclave.rawValue),
                .integer(limit)),
            { try $0.text(0) })
    }

    func addNotice(_ notice: PhoneNoticeRecord, sessionID: UUID?) async throws -> Bool {
        try await database.changes(
            Statement(
                """
                INSERT INTO phone_notices (id, user_id, title, body, created_at, session_id) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (session_id) DO NOTHING
                """, .uuid(notice.id), .uuid(notice.userID), .text(notice.title), .text(notice.body),
                .date(notice.createdAt), .uuid(sessionID))) > 0
    }

    private static let signInColumns = "id, user_id, ip_address, user_agent, created_at"

    private static func signIn(_ row: StatementRow) throws -> SignInSeen {
        SignInSeen(
            sessionID: try row.uuid(0), userID: try row.uuid(1), ipAddress: try row.optionalText(2),
            userAgent: try row.optionalText(3), createdAt: try row.date(4))
    }

    func uncheckedSignIns(after: Date, until: Date, limit: Int) async throws -> [SignInSeen] {
        try await database.rows(
            Statement(
                """
                SELECT sessions.id, sessions.user_id, sessions.ip_address, sessions.user_agent, sessions.created_at
                FROM sessions LEFT JOIN sign_in_checks ON sign_in_checks.session_id = sessions.id
                WHERE sessions.created_at > ? AND sessions.created_at <= ? AND sign_in_checks.session_id IS NULL
                ORDER BY sessions.created_at LIMIT ?
                """, .date(after), .date(until), .integer(limit)), Self.signIn)
    }

    func markChecked(_ ids: [UUID], now: Date) async throws {
        guard !ids.isEmpty else { return }
        let rows = Array(repeating: "(?, ?)", count: ids.count).joined(separator: ", ")
        try await database.run(
            Statement(
                "INSERT INTO sign_in_checks (session_id, checked_at) VALUES \(rows) ON CONFLICT (session_id) DO NOTHING",
                ids.flatMap { [Statement.Value.uuid($0), .date(now)] }))
    }

    func deleteChecks(before: Date) async throws {
        try await database.run(Statement("DELETE FROM sign_in_checks WHERE checked_at <= ?", .date(before)))
    }

    func signIns(userID: UUID, from: Date, until: Date, except: UUID) async throws -> [SignInSeen] {
        try await database.rows(
            Statement(
                """
                SELECT \(Self.signInColumns) FROM sessions
                WHERE user_id = ? AND created_at <= ? AND id <> ? AND (created_at >= ? OR last_used_at >= ?)
                ORDER BY created_at DESC LIMIT 500
                """, .uuid(userID), .date(until), .uuid(except), .date(from), .date(from)), Self.signIn)
    }

    func signedInBefore(userID: UUID, until: Date, except: UUID) async throws -> Bool {
        try await database.count(
            Statement(
                "SELECT id FROM sessions WHERE user_id = ? AND created_at <= ? AND id <> ? LIMIT 1", .uuid(userID),
                .date(until), .uuid(except))) > 0
    }

    func notices(userID: UUID, since: Date, limit: Int) async throws -> [PhoneNoticeRecord] {
        try await database.rows(
            Statement(
                """
                SELECT id, user_id, title, body, created_at FROM phone_notices
                WHERE user_id = ? AND created_at > ? ORDER BY created_at DESC, id DESC LIMIT ?
                """, .uuid(userID), .date(since), .integer(limit)),
            { row in
                PhoneNoticeRecord(
                    id: try row.uuid(0), userID: try row.uuid(1), title: try row.text(2), body: try row.text(3),
                    createdAt: try row.date(4))
            })
    }

    func noticed(since: Date) async throws -> [UUID] {
        try await database.rows(
            Statement("SELECT DISTINCT user_id FROM phone_notices WHERE created_at > ?", .date(since)),
            { try $0.uuid(0) })
    }

    func deleteNotices(before: Date) async throws {
        try await database.run(Statement("DELETE FROM phone_notices WHERE created_at <= ?", .date(before)))
    }
}
