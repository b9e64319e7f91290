import Fluent
import Foundation
import SQLKit
import Vapor

/// Puts messages into the outbox table. Call it with the same database (transaction) that stores
/// the code the message carries, so both land or neither does.
enum Outbox {
    static func enqueue(
        _ channel: OutboxMessage.Channel, to destination: String, subject: String = "", body: String,
        secrets: SecretBox, now: Date, on database: any Database
    ) async throws {
        let id = UUID()
        let message = OutboxMessage(
            id: id, channel: channel,
            destinationCiphertext: try secrets.seal(Array(destination.utf8), boundTo: id), subject: subject,
            bodyCiphertext: try secrets.seal(Array(body.utf8), boundTo: id), now: now)
        try await message.create(on: database)
    }
}

/// Delivers the outbox: claims due messages with one conditional update (so several instances
/// never send one message twice), hands each to its provider, and on failure retries with
/// exponential back-off (2 s, 4 s, … up to 5 minutes) for up to 10 attempts. A provider outage
/// delays a code; it loses none. Delivered texts are wiped.
struct DeliveryWorker: Sendable {
    static let maximumAttempts = 10
    /// How long a claimed message is reserved; if its worker dies, another retries after this.
    static let lease: TimeInterval = 60

    let sms: any MessageProvider
    let email: any MessageProvider
    let secrets: SecretBox

    /// Delivers everything due at `now`; returns how many messages were sent. The claim, which
    /// runs every second, goes to `sql` (`TwofoldContext.sql`: with an SQLite file, Twofold's
    /// own connection, as sign-ins do, rather than taking the write lock from Fluent's beside
    /// them); the few messages claimed are then read and updated through Fluent.
    @discardableResult
    func runOnce(on database: any Database, sql: (any SQLDatabase)? = nil, now: Date, logger: Logger) async throws
        -> Int
    {
        guard let sql = sql ?? database as? any SQLDatabase else { return 0 }
        let due: SQLQueryString = """
            ((status = 'pending' OR status = 'sending') AND next_attempt_at <= \(bind: now))
            """
        let claimed = try await sql.raw(
            """
            UPDATE outbox_messages SET status = 'sending', attempts = attempts + 1,
              next_attempt_at = \(bind: now.addingTimeInterval(Self.lease))
            WHERE id IN (SELECT id FROM outbox_messages WHERE \(due) ORDER BY next_attempt_at LIMIT 20) AND \(due)
            RETURNING id
            """
        ).all()
        var sent = 0
        for row in claimed {
            let id = try row.decode(column: "id", as: UUID.self)
            guard let message = try await OutboxMessage.find(id, on: database) else { continue }
            do {
                let outgoing = OutgoingMessage(
                    channel: message.channel,
                    destination: String(
                        decoding: try secrets.open(message.destinationCiphertext, boundTo: id), as: UTF8.self),
                    subject: message.subject,
                    body: String(decoding: try secrets.open(message.bodyCiphertext, boundTo: id), as: UTF8.self))
                let provider = message.channel == .sms ? sms : email
                try await provider.deliver(outgoing)
                message.status = .sent
                message.sentAt = now
                message.bodyCiphertext = ""
                message.lastError = nil
                try await message.update(on: database)
                sent += 1
            } catch {
                let reason = String(String(describing: error).prefix(200))
                if message.attempts >= Self.maximumAttempts {
                    message.status = .failed
                    message.bodyCiphertext = ""
                } else {
                    message.status = .pending
                    message.nextAttemptAt = now.addingTimeInterval(min(300, pow(2, Double(message.attempts))))
                }
                message.lastError = reason
                try await message.update(on: database)
                logger.warning(
                    "delivery failed",
                    metadata: [
                        "message": "\(id)", "channel": "\(message.channel.rawValue)", "attempt": "\(message.attempts)",
                        "error": "\(reason)",
                    ])
            }
        }
        return sent
    }
}
