import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sign-in over HTTP against the built binary, on SQLite and on PostgreSQL.
@Suite(.serialized) struct AuthEndToEndTests {
    @Test func signInJourneyOnSQLite() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        try await TestAccounts.signInJourney(on: server)
        #expect(!server.log.contains(TestAccounts.password), "passwords never reach the log")
    }

    @Test func signInJourneyOnPostgreSQL() async throws {
        guard let url = TestAccounts.postgresURL() else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: ["DATABASE_URL": url])
        defer { server.stop() }
        try await ResetDatabase.run(server)
        try await TestAccounts.signInJourney(on: server)
    }

    /// Two instances on one PostgreSQL database: a refresh token exchanged on one is refused on
    /// the other, and the reuse revokes the family everywhere.
    @Test func aRefreshTokenUsedOnOneInstanceIsRefusedOnAnother() async throws {
        try await TestAccounts.withTwoInstances { first, second in
            _ = try await first.client.send(
                API.Auth.register,
                RegisterRequest(username: "bob", email: "bob@example.com", password: TestAccounts.password))
            let tokens = try await first.client.send(
                API.Auth.login, LoginRequest(username: "bob", password: TestAccounts.password)
            ).tokens
            let refresh = RefreshRequest(refreshToken: tokens.refreshToken.token)
            let pair = try await first.client.send(API.Auth.refresh, refresh)
            let onSecond = await refusal { try await second.client.send(API.Auth.refresh, refresh) }
            #expect(onSecond?.status == 401, "\(String(describing: onSecond))")
            let newest = await refusal {
                try await first.client.send(API.Auth.refresh, RefreshRequest(refreshToken: pair.refreshToken.token))
            }
            #expect(newest?.status == 401, "the reuse revoked the whole family")
        }
    }

    /// Two instances on one PostgreSQL database: of sixteen parallel registrations with one
    /// `Idempotency-Key`, half sent to each, exactly one runs; the rest wait or get its answer.
    @Test func oneIdempotencyKeyRunsOnceAcrossInstances() async throws {
        try await TestAccounts.withTwoInstances { first, second in
            let body = RegisterRequest(username: "ida", email: "ida@example.com", password: TestAccounts.password)
            // The answers as they came: whether each was replayed is in a header.
            let answers = try await withThrowingTaskGroup(of: HTTPAnswer.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await (index.isMultiple(of: 2) ? first : second).client.exchange(
                            API.Auth.register, body, headers: [Wire.Header.idempotencyKey: "ida-signs-up-once"])
                    }
                }
                return try await group.reduce(into: [HTTPAnswer]()) { $0.append($1) }
            }
            let ran = answers.filter { $0.status == 201 && $0.header(Wire.Header.idempotentReplayed) == nil }
            #expect(ran.count == 1, "\(answers.map(\.status))")
            #expect(answers.allSatisfy { $0.status == 201 || ($0.status == 409 && $0.text.contains("still being")) })
            // Another registration of the same account without the key meets the one made.
            let again = await refusal { try await second.client.send(API.Auth.register, body) }
            #expect(again?.status == 409, "\(String(describing: again))")
        }
    }

    @Test func healthStaysFastWhileTwentyLoginsHashInParallel() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        // The default bcrypt cost (12): each check takes a few hundred milliseconds of CPU.
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: ["TWOFOLD_BCRYPT_COST": "12"])
        defer { server.stop() }
        let client = server.client
        let clock = ContinuousClock()
        let started = clock.now
        let logins = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let wrong = LoginRequest(username: "nobody\(index)", password: "wrong password \(index)")
                        return try await client.exchange(API.Auth.login, wrong).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        // A session of its own, so the checks do not queue behind the logins' connections.
        let probe = APIClient(
            baseURL: server.baseURL, transport: URLSessionTransport(session: URLSession(configuration: .ephemeral)))
        var slowest = Duration.zero
        for _ in 0..<5 {
            let asked = clock.now
            #expect(try await probe.send(API.Operations.health).status == "ok")
            slowest = max(slowest, clock.now - asked)
            try await Task.sleep(for: .milliseconds(50))
        }
        let checksDone = clock.now
        let statuses = try await logins.value
        let loginsTook = clock.now - started
        #expect(statuses.allSatisfy { $0 == 401 }, "\(statuses)")
        #expect(clock.now - checksDone > .milliseconds(100), "the logins were still hashing during the checks")
        // Relative, so a busy machine slows both sides alike: were hashing on the event loops,
        // a health check would wait for the hashes queued before it, a good part of the total.
        #expect(slowest * 10 < loginsTook, "slowest /healthz \(slowest) while 20 logins took \(loginsTook)")
    }
}

/// Empties the shared PostgreSQL test database before a test that uses it.
enum ResetDatabase {
    static func run(_ server: ServerProcess) async throws {
        let psql = ExternalTool(url: URL(fileURLWithPath: "/usr/bin/psql"))
        guard let url = ProcessInfo.processInfo.environment["TWOFOLD_E2E_POSTGRES_URL"] else { return }
        // Every table but the migration record, so tables added later are emptied too.
        let output = try psql.run([
            url, "-qc",
            """
            DO $$ DECLARE t text; BEGIN
            FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_fluent_migrations'
            LOOP EXECUTE 'TRUNCATE ' || quote_ident(t) || ' CASCADE'; END LOOP; END $$
            """,
        ])
        #expect(output.status == 0, "\(output.errorText)")
    }
}
