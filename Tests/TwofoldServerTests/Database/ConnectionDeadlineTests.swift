import Foundation
import NIOPosix
import Testing
import TwofoldSQLite
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// The wait for a PostgreSQL connection ends with a refusal only when the client hands out no
/// connection at all for the whole deadline; a wait behind a busy pool goes on.
@Suite(.tags(.database))
struct ConnectionDeadlineTests {
    private static func watch(limit: Duration, grace: Duration = .seconds(5)) -> ConnectionWatch {
        ConnectionWatch(
            limit: limit, interval: .milliseconds(20), grace: grace, on: MultiThreadedEventLoopGroup.singleton.any())
    }

    /// Sleeps `wait` as a statement waiting for its connection under `watch`; true when the
    /// watch cut it short.
    private func cutShort(wait: Duration, watch: ConnectionWatch) async -> Bool {
        await Task {
            let ticket = watch.waiting()
            do {
                try await Task.sleep(for: wait)
                watch.leased(ticket)
                return false
            } catch {
                return watch.ended(ticket)
            }
        }.value
    }

    @Test func aWaitWhileNoConnectionIsHandedOutEndsAtTheDeadline() async {
        let watch = Self.watch(limit: .milliseconds(200))
        defer { watch.stop() }
        let start = ContinuousClock.now
        // Not cut short, the sleep would run its 10 s and answer false.
        #expect(await cutShort(wait: .seconds(10), watch: watch))
        #expect(ContinuousClock.now - start >= .milliseconds(200))
    }

    @Test func aWaitBehindABusyPoolOutlastsTheDeadline() async {
        let watch = Self.watch(limit: .milliseconds(500))
        defer { watch.stop() }
        // Other statements get connections, from a thread of their own so that a busy test run
        // cannot starve them.
        let busy = Thread {
            while !Thread.current.isCancelled {
                watch.leased(nil)
                usleep(10_000)
            }
        }
        busy.start()
        defer { busy.cancel() }
        #expect(!(await cutShort(wait: .milliseconds(1_500), watch: watch)))
    }

    @Test func aWaitThatFinishesInTimeIsNotCutShort() async {
        let watch = Self.watch(limit: .seconds(1))
        defer { watch.stop() }
        #expect(!(await cutShort(wait: .milliseconds(10), watch: watch)))
    }

    @Test func aWaitThatGotItsConnectionIsNeverCancelledAfterwards() async throws {
        let watch = Self.watch(limit: .milliseconds(50))
        defer { watch.stop() }
        // Registered, then leased at once: the sweeps that come after leave the task alone.
        let outcome = await Task { () -> Bool in
            let ticket = watch.waiting()
            watch.leased(ticket)
            do {
                try await Task.sleep(for: .milliseconds(300))
                return true
            } catch {
                return false
            }
        }.value
        #expect(outcome)
    }

    @Test func aConnectionHandedOutAsTheWaitWasCutShortIsToldSo() async {
        let watch = Self.watch(limit: .milliseconds(50))
        defer { watch.stop() }
        // The sweep cancels the wait; the connection comes just after: `leased` says the wait
        // was cut short, so the statement answers as for no connection (and does not run on a
        // cancelled task).
        let cutShortAtLease = await Task { () -> Bool in
            let ticket = watch.waiting()
            do {
                // Until the sweep cancels the wait (within milliseconds; ten seconds at most).
                for _ in 0..<100 { try await Task.sleep(for: .milliseconds(100)) }
                return false
            } catch {
                return watch.leased(ticket)
            }
        }.value
        #expect(cutShortAtLease)
    }

    /// A connection whose closing the test decides.
    private final class Connection: ClosableConnection, @unchecked Sendable {
        private let lock = NSLock()
        private var closed = false
        var isClosed: Bool { lock.withLock { closed } }
        func close() { lock.withLock { closed = true } }
    }

    /// A statement PostgresNIO never answers (its query written to a torn-down pipeline) fails
    /// with `connectionLost` once its connection has been closed for the grace period, instead
    /// of waiting forever.
    @Test func aStatementWhoseConnectionClosedUnderItIsAnswered() async throws {
        let watch = Self.watch(limit: .seconds(3), grace: .milliseconds(100))
        defer { watch.stop() }
        let connection = Connection()
        let start = ContinuousClock.now
        let outcome = Task {
            try await watch.running(on: connection) { () async throws -> Int in
                // Never answered, as a lost query's promise; not even cancellation ends it.
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        connection.close()
        await #expect(throws: PostgresStatementsError.self) { try await outcome.value }
        let waited = ContinuousClock.now - start
        // At least the grace after the close; at most whatever a loaded machine takes, but an end.
        #expect(waited >= .milliseconds(300) && waited < .seconds(60), "\(waited)")
    }

    /// A statement that answers, even just after its connection closed, keeps its answer.
    @Test func aStatementThatAnswersWithinTheGraceKeepsItsAnswer() async throws {
        let watch = Self.watch(limit: .seconds(3), grace: .seconds(60))
        defer { watch.stop() }
        let connection = Connection()
        let answer = try await watch.running(on: connection) { () async throws -> Int in
            connection.close()
            try await Task.sleep(for: .milliseconds(100))
            return 7
        }
        #expect(answer == 7)
        let failed = await #expect(throws: CancellationError.self) {
            try await watch.running(on: Connection()) { () async throws -> Int in throw CancellationError() }
        }
        #expect(failed != nil, "its own errors come through unchanged")
    }

    /// The server's wait is `TWOFOLD_POSTGRES_CONNECT_TIMEOUT`: against a PostgreSQL server
    /// that is not there, a statement fails naming the configured time.
    @Test func theServerWaitsForAConnectionAsLongAsConfigured() async throws {
        let directory = try BuildProducts.temporaryDirectory("twofold-connect")
        defer { try? FileManager.default.removeItem(at: directory) }
        for seconds in [1, 2] {
            let configuration = Configuration(
                dataDirectory: directory, database: .postgres(url: "postgres://nobody:x@127.0.0.1:1/none"),
                postgresConnectTimeout: .seconds(seconds))
            try await withApp { app in
                try await configure(app, with: configuration)
                let start = ContinuousClock.now
                // In a task of its own, as a request's: the watch ends a wait by cancelling its task.
                let error = await #expect(throws: PostgresStatementsError.self) {
                    try await Task { try await app.twofold.database.run(Statement("SELECT 1")) }.value
                }
                #expect(error.map { "\($0)" } == "no PostgreSQL connection within \(Duration.seconds(seconds))")
                #expect(ContinuousClock.now - start >= .seconds(seconds))
            }
        }
    }
}
