import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

/// Accounts on a built server: the password they use, a PostgreSQL database when one is given, the sign-in journey, two instances on one database.
enum TestAccounts {
    static let password = ClientAccounts.password

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

    /// Register → login → an authenticated call → refresh → logout, then the dead tokens.
    static func signInJourney(on server: ServerProcess) async throws {
        let client = server.client
        let created = try await client.send(
            API.Auth.register, RegisterRequest(username: "alice", email: "alice@example.com", password: password))
        #expect(created.user.username == "alice")
        let tokens = try await client.send(
            API.Auth.login, LoginRequest(email: "alice@example.com", password: password)
        ).tokens

        #expect(try await client.send(API.Account.show, bearer: tokens.accessToken.token).username == "alice")

        let next = try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))

        _ = try await client.send(API.Auth.logout, RefreshRequest(refreshToken: next.refreshToken.token))
        // The answer as it came: its Content-Type is checked.
        let after = try await client.exchange(API.Account.show, bearer: next.accessToken.token)
        #expect(after.status == 401)
        #expect(after.header(Wire.Header.contentType)?.hasPrefix(Problem.mediaType) == true)
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
}
