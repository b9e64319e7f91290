import Foundation
import Logging

/// Puts messages into the outbox, sealed.
struct Outbox: Sendable {
    let store: any OutboxStore
    let secrets: SecretBox

    func enqueue(
        _ channel: DeliveryChannel, to destination: String, subject: String = "", body: String, now: Date
    ) async throws {
        let id = SecureRandom.timeOrderedUUID(at: now)
        try await store.insert(
            OutboxRecord(
                id: id, channel: channel, destinationCiphertext: try secrets.seal(Array(destination.utf8), boundTo: id),
                subject: subject, bodyCiphertext: try secrets.seal(Array(body.utf8), boundTo: id), nextAttemptAt: now,
                createdAt: now))
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

    let store: any OutboxStore
    let sms: any MessageProvider
    let email: any MessageProvider
    let secrets: SecretBox

    /// Delivers everything due at `now`; returns how many messages were sent.
    @discardableResult
    func runOnce(now: Date, logger: Logger) async throws -> Int {
        let claimed = try await store.claimDue(now: now, leaseUntil: now.addingTimeInterval(Self.lease), limit: 20)
        var sent = 0
        for id in claimed {
            guard let message = try await store.message(id: id) else { continue }
            do {
                let outgoing = OutgoingMessage(
                    channel: message.channel,
                    destination: String(
                        decoding: try secrets.open(message.destinationCiphertext, boundTo: id), as: UTF8.self),
                    subject: message.subject,
                    body: String(decoding: try secrets.open(message.bodyCiphertext, boundTo: id), as: UTF8.self))
                let provider = message.channel == .sms ? sms : email
                try await provider.deliver(outgoing)
                try await store.markSent(id: id, now: now)
                sent += 1
            } catch {
                let reason = String(String(describing: error).prefix(200))
                let retryAt =
                    message.attempts >= Self.maximumAttempts
                    ? nil : now.addingTimeInterval(min(300, pow(2, Double(message.attempts))))
                try await store.markUndelivered(id: id, error: reason, retryAt: retryAt)
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
