import Foundation
import Testing
import TwofoldAPI
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sign-in over HTTP against the built binary, on SQLite and on PostgreSQL.
@Suite(.serialized) struct AuthEndToEndTests {
    static let password = "correct horse battery staple"

    /// The PostgreSQL database `scripts/test` prepares, or `nil` after recording why it is needed.
    /// A fresh, empty database on that server for each call, so suites running in parallel never
    /// see each other's rows.
    static func postgresURL() -> String? {
        guard let base = ProcessInfo.processInfo.environment["TWOFOLD_E2E_POSTGRES_URL"], !base.isEmpty else {
            if ProcessInfo.processInfo.environment["TWOFOLD_ALLOW_MISSING_TOOLS"] != "1" {
                Issue.record("TWOFOLD_E2E_POSTGRES_URL is not set; scripts/test starts PostgreSQL and sets it")
            }
            return nil
        }
        let name = "e2e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let psql = ExternalTool(url: URL(fileURLWithPath: "/usr/bin/psql"))
        guard var components = URLComponents(string: base),
            let created = try? psql.run([base, "-qc", "CREATE DATABASE \(name)"]), created.status == 0
        else {
            Issue.record("could not create a PostgreSQL database on \(base)")
            return nil
        }
        components.path = "/" + name
        return components.string
    }

    static func post<T: Decodable>(
        _ server: ServerProcess, _ path: String, _ body: [String: String], bearer: String? = nil, as type: T.Type
    ) async throws -> (Int, T?) {
        let response = try await HTTP.send(
            HTTP.json("POST", server.baseURL.appendingPathComponent(path), body, bearer: bearer))
        return (response.status, try? HTTP.decoder.decode(T.self, from: response.body))
    }

    /// Register → login → an authenticated call → refresh → logout, then the dead tokens.
    static func signInJourney(on server: ServerProcess) async throws {
        let (created, _) = try await Self.post(
            server, API.Auth.register.path(),
            ["username": "alice", "email": "alice@example.com", "password": password], as: RegisterResponse.self)
        #expect(created == 201)
        let (status, login) = try await Self.post(
            server, API.Auth.login.path(), ["email": "alice@example.com", "password": password],
            as: AuthTokensResponse.self)
        #expect(status == 200)
        let tokens = try #require(login)

        let account = try await HTTP.send(
            HTTP.json(
                "GET", server.baseURL.appendingPathComponent(API.Account.show.path()), nil,
                bearer: tokens.accessToken.token))
        #expect(account.status == 200)
        #expect(try HTTP.decoder.decode(UserDTO.self, from: account.body).username == "alice")

        let (refreshed, pair) = try await Self.post(
            server, API.Auth.refresh.path(), ["refreshToken": tokens.refreshToken.token], as: RefreshResponse.self)
        #expect(refreshed == 200)
        let next = try #require(pair)

        let (loggedOut, _) = try await Self.post(
            server, API.Auth.logout.path(), ["refreshToken": next.refreshToken.token], as: SuccessResponse.self)
        #expect(loggedOut == 200)
        let after = try await HTTP.send(
            HTTP.json(
                "GET", server.baseURL.appendingPathComponent(API.Account.show.path()), nil,
                bearer: next.accessToken.token))
        #expect(after.status == 401)
        #expect(after.header("Content-Type")?.hasPrefix("application/problem+json") == true)
    }

    @Test func signInJourneyOnSQLite() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        try await Self.signInJourney(on: server)
        #expect(!server.log.contains(Self.password), "passwords never reach the log")
    }

    @Test func signInJourneyOnPostgreSQL() async throws {
        guard let url = Self.postgresURL() else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: ["DATABASE_URL": url])
        defer { server.stop() }
        try await ResetDatabase.run(server)
        try await Self.signInJourney(on: server)
    }

    /// Runs `body` with two server instances on the end-to-end PostgreSQL database, reset
    /// first; skipped without one.
    static func withTwoInstances(_ body: (ServerProcess, ServerProcess) async throws -> Void) async throws {
        guard let url = Self.postgresURL() else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let first = try await ServerProcess(dataDirectory: data, environment: ["DATABASE_URL": url])
        defer { first.stop() }
        try await ResetDatabase.run(first)
        let second = try await ServerProcess(dataDirectory: data, environment: ["DATABASE_URL": url])
        defer { second.stop() }
        try await body(first, second)
    }

    /// Two instances on one PostgreSQL database: a refresh token exchanged on one is refused on
    /// the other, and the reuse revokes the family everywhere.
    @Test func aRefreshTokenUsedOnOneInstanceIsRefusedOnAnother() async throws {
        try await Self.withTwoInstances { first, second in
            _ = try await Self.post(
                first, API.Auth.register.path(),
                ["username": "bob", "email": "bob@example.com", "password": Self.password],
                as: RegisterResponse.self)
            let (_, login) = try await Self.post(
                first, API.Auth.login.path(), ["username": "bob", "password": Self.password],
                as: AuthTokensResponse.self)
            let tokens = try #require(login)
            let (onFirst, pair) = try await Self.post(
                first, API.Auth.refresh.path(), ["refreshToken": tokens.refreshToken.token], as: RefreshResponse.self)
            #expect(onFirst == 200)
            let (onSecond, _) = try await Self.post(
                second, API.Auth.refresh.path(), ["refreshToken": tokens.refreshToken.token], as: RefreshResponse.self)
            #expect(onSecond == 401)
            let (newest, _) = try await Self.post(
                first, API.Auth.refresh.path(), ["refreshToken": try #require(pair).refreshToken.token],
                as: RefreshResponse.self)
            #expect(newest == 401, "the reuse revoked the whole family")
        }
    }

    /// Two instances on one PostgreSQL database: of sixteen parallel registrations with one
    /// `Idempotency-Key`, half sent to each, exactly one runs; the rest wait or get its answer.
    @Test func oneIdempotencyKeyRunsOnceAcrossInstances() async throws {
        try await Self.withTwoInstances { first, second in
            let body = ["username": "ida", "email": "ida@example.com", "password": Self.password]
            let answers = try await withThrowingTaskGroup(of: HTTP.Response.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        var request = HTTP.json(
                            "POST",
                            (index.isMultiple(of: 2) ? first : second).baseURL
                                .appendingPathComponent(API.Auth.register.path()), body)
                        request.setValue("ida-signs-up-once", forHTTPHeaderField: Wire.Header.idempotencyKey)
                        return try await HTTP.send(request)
                    }
                }
                return try await group.reduce(into: [HTTP.Response]()) { $0.append($1) }
            }
            let ran = answers.filter { $0.status == 201 && $0.header(Wire.Header.idempotentReplayed) == nil }
            #expect(ran.count == 1, "\(answers.map(\.status))")
            #expect(answers.allSatisfy { $0.status == 201 || ($0.status == 409 && $0.text.contains("still being")) })
            // Another registration of the same account without the key meets the one made.
            #expect(
                try await CodeDeliveryEndToEndTests.call(second, "POST", API.Auth.register.path(), body).status == 409)
        }
    }

    @Test func healthStaysFastWhileTwentyLoginsHashInParallel() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        // The default bcrypt cost (12): each check takes a few hundred milliseconds of CPU.
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let clock = ContinuousClock()
        let started = clock.now
        let logins = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await HTTP.send(
                            HTTP.json(
                                "POST", server.baseURL.appendingPathComponent(API.Auth.login.path()),
                                ["username": "nobody\(index)", "password": "wrong password \(index)"])
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let probe = URLSession(configuration: .ephemeral)
        var slowest = Duration.zero
        for _ in 0..<5 {
            let asked = clock.now
            let health = try await HTTP.send(
                HTTP.request("GET", server.baseURL.appendingPathComponent(API.Operations.health.path())), session: probe
            )
            #expect(health.status == 200)
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
