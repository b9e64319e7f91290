import Foundation
import TwofoldSQLite

/// A message waiting to be delivered (`outbox_messages`): an SMS or email carrying a code or a
/// notice. Destination and text are stored encrypted (they hold the code and the full phone
/// number), and the text is wiped once delivered or given up.
struct OutboxRecord: Sendable, Equatable {
    enum Status: String, Sendable { case pending, sending, sent, failed }

    var id: UUID
    var channel: DeliveryChannel
    var destinationCiphertext: String
    var subject: String
    var bodyCiphertext: String
    var status: Status = .pending
    var attempts = 0
    var nextAttemptAt: Date
    var createdAt: Date
    var sentAt: Date?
    var lastError: String?
}

/// The outbox. Claiming due messages is one conditional update, so several instances never send
/// one message twice.
protocol OutboxStore: Sendable {
    func insert(_ message: OutboxRecord) async throws
    /// Claims up to `limit` messages due at `now` (pending, or sending with a lease run out): each
    /// becomes `sending` with one more attempt and a lease until `leaseUntil`. Their ids.
    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [UUID]
    func message(id: UUID) async throws -> OutboxRecord?
    /// Delivered at `now`: its text is wiped.
    func markSent(id: UUID, now: Date) async throws
    /// Not delivered: tried again at `retryAt`, or given up (its text wiped) when `retryAt` is `nil`.
    func markUndelivered(id: UUID, error: String, retryAt: Date?) async throws
}

/// `OutboxStore` on the server's database.
struct SQLOutboxStore: OutboxStore {
    let database: any SQLExecutor

    private static let columns = """
        id, channel, destination_ciphertext, subject, body_ciphertext, status, attempts, next_attempt_at, \
        created_at, sent_at, last_error
        """

    func insert(_ message: OutboxRecord) async throws {
        try await database.run(
            Statement(
                "INSERT INTO outbox_messages (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                .uuid(message.id), .text(message.channel.rawValue), .text(message.destinationCiphertext),
                .text(message.subject), .text(message.bodyCiphertext), .text(message.status.rawValue),
                .integer(message.attempts), .date(message.nextAttemptAt), .date(message.createdAt),
                .date(message.sentAt), .text(message.lastError)))
    }

    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [UUID] {
        let due = "((status = 'pending' OR status = 'sending') AND next_attempt_at <= ?)"
        // RETURNING through `rows`: both databases return the rows an UPDATE changed.
        return try await database.rows(
            Statement(
                """
                UPDATE outbox_messages SET status = 'sending', attempts = attempts + 1, next_attempt_at = ?
                WHERE id IN (SELECT id FROM outbox_messages WHERE \(due) ORDER BY next_attempt_at LIMIT ?) AND \(due)
                RETURNING id
                """, .date(leaseUntil), .date(now), .integer(limit), .date(now)), { try $0.uuid(0) })
    }

    func message(id: UUID) async throws -> OutboxRecord? {
        try await database.rows(
            Statement("SELECT \(Self.columns) FROM outbox_messages WHERE id = ?", .uuid(id)),
            { row in
                guard let channel = DeliveryChannel(rawValue: try row.text(1)),
                    let status = OutboxRecord.Status(rawValue: try row.text(5))
                else { throw StatementRowError(column: 1, reason: "is not a known channel or status") }
                return OutboxRecord(
                    id: try row.uuid(0), channel: channel, destinationCiphertext: try row.text(2),
                    subject: try row.text(3), bodyCiphertext: try row.text(4), status: status,
                    attempts: try row.integer(6), nextAttemptAt: try row.date(7), createdAt: try row.date(8),
                    sentAt: try row.optionalDate(9), lastError: try row.optionalText(10))
            }
        ).first
    }

    func markSent(id: UUID, now: Date) async throws {
        try await database.run(
            Statement(
                """
                UPDATE outbox_messages SET status = 'sent', sent_at = ?, body_ciphertext = '', last_error = NULL
                WHERE id = ?
                """, .date(now), .uuid(id)))
    }

    func markUndelivered(id: UUID, error: String, retryAt: Date?) async throws {
        if let retryAt {
            try await database.run(
                Statement(
                    "UPDATE outbox_messages SET status = 'pending', next_attempt_at = ?, last_error = ? WHERE id = ?",
                    .date(retryAt), .text(error), .uuid(id)))
        } else {
            try await database.run(
                Statement(
                    "UPDATE outbox_messages SET status = 'failed', body_ciphertext = '', last_error = ? WHERE id = ?",
                    .text(error), .uuid(id)))
        }
    }
}
