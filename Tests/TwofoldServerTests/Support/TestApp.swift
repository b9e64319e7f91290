import FluentPostgresDriver
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldServer
import TwofoldTestSupport
import VaporTesting

/// A clock tests move by hand.
final class TestClock: @unchecked Sendable {
    // Safe: every access goes through `lock`.
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)

    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current.addTimeInterval(seconds) } }
}

/// Runs `body` against a fresh application: its own SQLite file and data folder, a hand-moved
/// clock, a low bcrypt cost, migrated, always shut down and cleaned up.
func withTestApp(
    mode: Configuration.Mode = .development,
    clock: TestClock = TestClock(),
    adjust: (inout Configuration) -> Void = { _ in },
    routes: (@Sendable (Application) throws -> Void)? = nil,
    _ body: (Application) async throws -> Void
) async throws {
    let directory = try BuildProducts.temporaryDirectory("twofold-test")
    defer { try? FileManager.default.removeItem(at: directory) }
    let database = try await TestDatabase.make(in: directory)
    var configuration = Configuration(
        mode: mode, dataDirectory: directory.appendingPathComponent("data"), database: database.configuration,
        // A test run loads the machine: many apps open connections to fresh databases at once,
        // which can take seconds there, and that is not the outage the short default is for
        // (`OperationsTests` keeps the default against a database that is not there).
        postgresConnections: 10, postgresConnectTimeout: .seconds(60), maxBodyBytes: 4096, bcryptCost: 4,
        trustProxy: true, runsBackgroundJobs: false)
    adjust(&configuration)
    do {
        try await withApp { app in
            try await configure(app, with: configuration, clock: { clock.now })
            try routes?(app)
            try await app.autoMigrate()
            try await body(app)
        }
    } catch {
        try? await database.drop()
        throw error
    }
    try await database.drop()
}

/// An SQLite file in the test's folder (so the server runs as in production: WAL, and its own
/// direct connection beside Fluent's), or — when `TWOFOLD_TEST_POSTGRES_URL` names a PostgreSQL
/// server, as `scripts/test` does for its second run — a fresh PostgreSQL database per test,
/// dropped after; or, with `TWOFOLD_TEST_SQLITE_MEMORY=1` (its third run), `sqlite::memory:`.
struct TestDatabase {
    let configuration: Configuration.Database
    let drop: @Sendable () async throws -> Void

    /// Whether tests run on an SQLite file (not PostgreSQL, not `sqlite::memory:`): Twofold's own
    /// SQLite connection exists only then.
    static var isSQLiteFile: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["TWOFOLD_TEST_POSTGRES_URL"].map(\.isEmpty) ?? true
            && environment["TWOFOLD_TEST_SQLITE_MEMORY"] != "1"
    }

    static func make(in directory: URL) async throws -> TestDatabase {
        if ProcessInfo.processInfo.environment["TWOFOLD_TEST_SQLITE_MEMORY"] == "1" {
            return TestDatabase(configuration: .sqliteInMemory, drop: {})
        }
        guard let admin = ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"], !admin.isEmpty else {
            let path = directory.appendingPathComponent("twofold.sqlite").path
            return TestDatabase(configuration: .sqlite(path: path), drop: {})
        }
        let name = "twofold_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        try await onAdminDatabase(admin) { sql in try await sql.raw("CREATE DATABASE \(ident: name)").run() }
        let base = admin[..<(admin.lastIndex(of: "/") ?? admin.endIndex)]
        return TestDatabase(configuration: .postgres(url: "\(base)/\(name)")) {
            try await onAdminDatabase(admin) { sql in
                try await sql.raw("DROP DATABASE IF EXISTS \(ident: name) WITH (FORCE)").run()
            }
        }
    }

    private static func onAdminDatabase(_ url: String, _ work: (any SQLDatabase) async throws -> Void) async throws {
        let app = try await Application.make(.testing)
        do {
            app.databases.use(try .postgres(url: url, connectionPoolTimeout: .seconds(60)), as: .psql)
            guard let sql = app.db as? any SQLDatabase else { throw Abort(.internalServerError) }
            try await work(sql)
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }
}

extension TestingHTTPResponse {
    /// The body as a problem document, or a test failure.
    func problem() throws -> ProblemBody { try decodeJSON(ProblemBody.self, from: body) }

    /// The body decoded as `T` with ISO-8601 dates.
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeJSON(T.self, from: body) }
}

/// A JSON answer decoded as `T`, with ISO-8601 dates.
func decodeJSON<T: Decodable>(_ type: T.Type, from body: ByteBuffer) throws -> T {
    try Wire.decoder().decode(T.self, from: Data(buffer: body))
}

/// The wire form of a problem, decoded independently of the server's own type.
struct ProblemBody: Decodable {
    let type: String
    let title: String
    let status: Int
    let detail: String?
    let code: String
    let errors: [String: String]?
    let retryAfter: Int?
    let attemptsRemaining: Int?
    let lockoutUntil: String?
}

/// JSON request bodies for the tests.
func json(_ object: [String: String]) -> ByteBuffer {
    ByteBuffer(data: try! JSONSerialization.data(withJSONObject: object))
}

let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json"]

extension HTTPHeaders {
    static func bearer(_ token: String, from address: String = "10.0.0.1") -> HTTPHeaders {
        ["Authorization": "Bearer \(token)", "Content-Type": "application/json", "X-Forwarded-For": address]
    }

    static func client(_ address: String) -> HTTPHeaders {
        ["Content-Type": "application/json", "X-Forwarded-For": address]
    }
}
