import Foundation
import Testing
import TwofoldSQLite
import _ConnectionPoolModule

@testable import TwofoldServer

/// `TWOFOLD_POSTGRES_CONNECTIONS` bounds the connections an instance opens to PostgreSQL for its
/// requests. Runs in the PostgreSQL pass (`TWOFOLD_TEST_POSTGRES_URL`).
@Suite(.tags(.database)) struct PostgresConnectionsTests {
    static var onPostgreSQL: Bool {
        !(ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"] ?? "").isEmpty
    }

    /// The client's connections to this test's database once `statements` statements that each
    /// hold their connection for a moment ran at once.
    static func connectionsOpened(limit: Int, statements: Int) async throws -> Int {
        var opened = -1
        try await withTestApp(adjust: { $0.postgresConnections = limit }) { app in
            let database = app.twofold.database
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<statements {
                    group.addTask { try await database.run(Statement("SELECT pg_sleep(0.05)")) }
                }
                try await group.waitForAll()
            }
            opened =
                try await database.rows(
                    Statement(
                        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?",
                        [.text(PostgresStatements.applicationName)])
                ) { try $0.integer(0) }.first ?? -1
        }
        return opened
    }

    @Test func theSettingBoundsTheConnectionsOpened() async throws {
        guard Self.onPostgreSQL else { return }
        // Twenty statements at once: the pool opens as many connections as it may.
        let bounded = try await Self.connectionsOpened(limit: 2, statements: 20)
        #expect(bounded >= 1 && bounded <= 2, "\(bounded) connections with a limit of 2")
        let wider = try await Self.connectionsOpened(limit: 6, statements: 20)
        #expect(wider > 2 && wider <= 6, "\(wider) connections with a limit of 6")
    }

    /// Issue T: the SQLSTATEs of a server going away or not there yet are outages (the
    /// end-to-end test `aStatementCutShortByTheServerIsA503` terminates backends under load).
    @Test func aServerGoingAwayIsAnOutage() {
        #expect(DatabaseOutage.postgresReason(sqlState: "57P01") != nil)
        #expect(DatabaseOutage.postgresReason(sqlState: "57P03") != nil)
        #expect(DatabaseOutage.postgresReason(sqlState: "08006") != nil)
        #expect(DatabaseOutage.postgresReason(sqlState: "23505") == nil, "a unique violation is no outage")
        #expect(DatabaseOutage.postgresReason(sqlState: nil) == nil)
    }

    /// PostgresNIO's pool, after a minute of failed connections with none open, fails each
    /// request at once with an error of its own: that is an outage (`503`), not a bug (`500`),
    /// for however long PostgreSQL stays away.
    @Test func aPoolThatStoppedTryingIsAnOutage() {
        #expect(DatabaseOutage.reason(for: ConnectionPoolError.connectionCreationCircuitBreakerTripped) != nil)
        #expect(DatabaseOutage.reason(for: ConnectionPoolError.poolShutdown) != nil)
        #expect(DatabaseOutage.reason(for: ConnectionPoolError.requestCancelled) == nil, "a cancel is no outage")
    }
}
