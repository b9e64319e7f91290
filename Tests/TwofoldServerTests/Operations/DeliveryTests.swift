import Crypto
import Fluent
import Foundation
import SQLKit
import Testing
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// A provider that records what it is asked to deliver and fails the first `failures` times.
final class RecordingProvider: MessageProvider, @unchecked Sendable {
    // Safe: every access to the mutable state goes through `lock`.
    let name = "recording"
    private let lock = NSLock()
    private var remainingFailures: Int
    private var received: [OutgoingMessage] = []

    init(failures: Int = 0) { remainingFailures = failures }

    var delivered: [OutgoingMessage] { lock.withLock { received } }

    func deliver(_ message: OutgoingMessage) async throws {
        try lock.withLock {
            if remainingFailures > 0 {
                remainingFailures -= 1
                throw DeliveryError("provider outage")
            }
            received.append(message)
        }
    }
}

@Suite(.tags(.database)) struct DeliveryTests {
    static func enqueue(_ app: Application, _ body: String, to destination: String = "+14155550123") async throws {
        try await app.twofold.outbox.enqueue(.sms, to: destination, body: body, now: app.twofold.clock.now())
    }

    /// The first message as stored: what the worker records of its attempts.
    struct StoredMessage: Sendable {
        enum Status: String { case pending, sending, sent, failed }
        var status: Status?
        var attempts: Int
        var nextAttemptAt: Date
        var lastError: String?
        var bodyCiphertext: String
    }

    static func stored(_ app: Application) async throws -> StoredMessage? {
        try await app.twofold.database.rows(
            Statement(
                "SELECT status, attempts, next_attempt_at, last_error, body_ciphertext FROM outbox_messages LIMIT 1")
        ) {
            StoredMessage(
                status: StoredMessage.Status(rawValue: try $0.text(0)), attempts: try $0.integer(1),
                nextAttemptAt: try $0.date(2), lastError: try $0.optionalText(3), bodyCiphertext: try $0.text(4))
        }.first
    }

    @Test func aMessageIsDeliveredOnceAndItsTextWiped() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let provider = RecordingProvider()
            let worker = DeliveryWorker(
                store: SQLOutboxStore(database: app.twofold.database), sms: provider, email: provider,
                secrets: app.twofold.secrets)
            try await Self.enqueue(app, "Your Twofold code is 123456")
            #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 1)
            #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 0)
            #expect(provider.delivered.map(\.body) == ["Your Twofold code is 123456"])
            #expect(provider.delivered.map(\.destination) == ["+14155550123"])
            let stored = try #require(try await Self.stored(app))
            #expect(stored.status == .sent && stored.bodyCiphertext.isEmpty)
        }
    }

    @Test func anOutageDelaysMessagesButLosesNone() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let provider = RecordingProvider(failures: 3)
            let worker = DeliveryWorker(
                store: SQLOutboxStore(database: app.twofold.database), sms: provider, email: provider,
                secrets: app.twofold.secrets)
            try await Self.enqueue(app, "code 111111")
            var waits: [TimeInterval] = []
            for _ in 0..<3 {
                #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 0)
                let stored = try #require(try await Self.stored(app))
                #expect(stored.status == .pending && stored.lastError == "provider outage")
                waits.append(stored.nextAttemptAt.timeIntervalSince(clock.now))
                // Not before the back-off has passed.
                #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 0)
                clock.advance(by: stored.nextAttemptAt.timeIntervalSince(clock.now))
            }
            #expect(waits == [2, 4, 8])
            #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 1)
            #expect(provider.delivered.count == 1)
        }
    }

    @Test func aMessageIsGivenUpAfterTenAttempts() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let provider = RecordingProvider(failures: 100)
            let worker = DeliveryWorker(
                store: SQLOutboxStore(database: app.twofold.database), sms: provider, email: provider,
                secrets: app.twofold.secrets)
            try await Self.enqueue(app, "code 222222")
            for _ in 0..<10 {
                try await worker.runOnce(now: clock.now, logger: app.logger)
                clock.advance(by: 301)
            }
            let stored = try #require(try await Self.stored(app))
            #expect(stored.status == .failed && stored.attempts == 10 && stored.bodyCiphertext.isEmpty)
        }
    }

    @Test func parallelWorkersSendEachMessageOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let provider = RecordingProvider()
            let worker = DeliveryWorker(
                store: SQLOutboxStore(database: app.twofold.database), sms: provider, email: provider,
                secrets: app.twofold.secrets)
            for index in 0..<30 { try await Self.enqueue(app, "message \(index)") }
            let logger = app.logger
            let now = clock.now
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 { group.addTask { try await worker.runOnce(now: now, logger: logger) } }
                for _ in 0..<6 { group.addTask { try await worker.runOnce(now: now, logger: logger) } }
                try await group.waitForAll()
            }
            try await worker.runOnce(now: now, logger: logger)
            #expect(provider.delivered.count == 30)
            #expect(Set(provider.delivered.map(\.body)).count == 30)
        }
    }

    @Test func theOutboxHoldsNoPlainText() async throws {
        try await withTestApp { app in
            try await Self.enqueue(app, "Your Twofold code is 987654")
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try #require(try await sql.raw("SELECT * FROM outbox_messages").first())
            for column in ["destination_ciphertext", "body_ciphertext"] {
                let value = try row.decode(column: column, as: String.self)
                #expect(!value.contains("987654") && !value.contains("4155550123"))
            }
        }
    }

    @Test func theConsoleProviderMarksItsOutputAsADelivery() async throws {
        let lines = LockedLines()
        let provider = ConsoleProvider { lines.append($0) }
        try await provider.deliver(
            OutgoingMessage(channel: .email, destination: "a@example.com", subject: "Your code", body: "code 1"))
        #expect(lines.all == ["=== twofold delivery (email to a@example.com) [Your code]: code 1\n"])
    }
}

/// Lines collected from concurrent writers.
final class LockedLines: @unchecked Sendable {
    // Safe: every access goes through `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// The webhook provider against a real HTTP receiver that checks what it gets.
@Suite struct WebhookProviderTests {
    struct Received: Sendable {
        let body: Data
        let signature: String?
    }

    /// A local HTTP server standing in for the SMS gateway: records each request and answers
    /// with the next status in `statuses`.
    static func withReceiver(
        statuses: [HTTPResponseStatus], _ body: (URI, @Sendable () -> [Received]) async throws -> Void
    ) async throws {
        let received = LockedBox<[Received]>([])
        let answers = LockedBox(statuses)
        try await withApp { receiver in
            receiver.http.server.configuration.port = 0
            receiver.post("sms") { request async throws -> Response in
                let data = Data(buffer: request.body.data ?? ByteBuffer())
                received.mutate {
                    $0.append(Received(body: data, signature: request.headers.first(name: "X-Twofold-Signature")))
                }
                let status = answers.mutate { $0.isEmpty ? .ok : $0.removeFirst() }
                return Response(status: status)
            }
            try await receiver.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(receiver.http.server.shared.localAddress?.port)
            do {
                try await body(URI(string: "http://127.0.0.1:\(port)/sms"), { received.value })
            } catch {
                // The server stops whatever the body threw (a skipped test too).
                await receiver.server.shutdown()
                throw error
            }
            await receiver.server.shutdown()
        }
    }

    @Test func postsSignedJSONAndRetriesOnErrors() async throws {
        let clock = TestClock()
        try await Self.withReceiver(statuses: [.serviceUnavailable]) { url, received in
            try await withTestApp(clock: clock) { app in
                let provider = WebhookSMSProvider(url: url, secret: "s3cret", client: app.client)
                let worker = DeliveryWorker(
                    store: SQLOutboxStore(database: app.twofold.database), sms: provider, email: provider,
                    secrets: app.twofold.secrets)
                try await DeliveryTests.enqueue(app, "Your Twofold code is 424242")
                #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 0)
                clock.advance(by: 2)
                #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 1)

                let requests = received()
                #expect(requests.count == 2)
                let last = try #require(requests.last)
                let payload = try JSONDecoder().decode([String: String].self, from: last.body)
                #expect(payload == ["to": "+14155550123", "message": "Your Twofold code is 424242"])
                let expected = HMAC<SHA256>.authenticationCode(
                    for: last.body, using: SymmetricKey(data: Data("s3cret".utf8))
                )
                .map { String(format: "%02x", $0) }.joined()
                #expect(last.signature == "sha256=\(expected)")
            }
        }
    }

    @Test func noSecretMeansNoSignature() async throws {
        try await Self.withReceiver(statuses: []) { url, received in
            try await withTestApp { app in
                let provider = WebhookSMSProvider(url: url, secret: nil, client: app.client)
                try await provider.deliver(
                    OutgoingMessage(channel: .sms, destination: "+14155550123", subject: "", body: "hi"))
                #expect(received().first?.signature == nil)
            }
        }
    }
}

/// A value shared between a test and a server it runs.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Safe: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    @discardableResult
    func mutate<Result>(_ change: (inout Value) -> Result) -> Result { lock.withLock { change(&stored) } }
}
