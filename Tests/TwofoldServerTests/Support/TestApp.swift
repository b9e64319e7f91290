import FluentPostgresDriver
import Foundation
import SQLKit
import Testing
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
/// dropped after. Either is a copy of one template the run migrated once (`TemplateDatabase`).
///
/// The PostgreSQL run is for the tests that can differ by database: those tagged `.database`
/// (with their suite or alone). Any other test that asks for a database there is skipped.
struct TestDatabase {
    let configuration: Configuration.Database
    let drop: @Sendable () async throws -> Void

    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether tests run on an SQLite file (not PostgreSQL): Twofold's own SQLite connection
    /// exists only then.
    static var isSQLiteFile: Bool { postgresURL == nil }

    static func make(in directory: URL) async throws -> TestDatabase {
        guard let admin = postgresURL else {
            let path = directory.appendingPathComponent("twofold.sqlite")
            try await TemplateDatabase.shared.copySQLite(to: path)
            return TestDatabase(configuration: .sqlite(path: path.path), drop: {})
        }
        guard Test.current?.tags.contains(.database) ?? true else {
            try Test.cancel("the PostgreSQL run is for the tests tagged .database; this one ran on SQLite")
        }
        let name = "twofold_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        try await TemplateDatabase.shared.copyPostgres(admin: admin, to: name)
        let base = admin[..<(admin.lastIndex(of: "/") ?? admin.endIndex)]
        return TestDatabase(configuration: .postgres(url: "\(base)/\(name)")) {
            try await onAdminDatabase(admin) { sql in
                try await sql.raw("DROP DATABASE IF EXISTS \(ident: name) WITH (FORCE)").run()
            }
        }
    }

    static func onAdminDatabase(_ url: String, _ work: (any SQLDatabase) async throws -> Void) async throws {
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

extension Tag {
    /// Tests whose outcome can differ by database (SQL that differs, single statements, parallel
    /// claims and replays, the policy matrix, connection loss): they run on SQLite and again on
    /// PostgreSQL.
    @Tag static var database: Self
}

/// The schema, migrated once per test run and copied for each test: an SQLite file copied, or a
/// PostgreSQL database made with `CREATE DATABASE … TEMPLATE`. Migrating took most of a short
/// test's time when each test ran every migration.
actor TemplateDatabase {
    static let shared = TemplateDatabase()

    private var sqlite: Task<URL, any Error>?
    private var postgres: Task<String, any Error>?

    /// Copies the migrated SQLite file to `path`.
    func copySQLite(to path: URL) async throws {
        if sqlite == nil {
            sqlite = Task {
                let folder = try BuildProducts.temporaryDirectory("twofold-template")
                let file = folder.appendingPathComponent("twofold.sqlite")
                try await Self.migrate(.sqlite(path: file.path), folder: folder)
                return file
            }
        }
        let template: URL
        do {
            template = try await sqlite!.value
        } catch {
            sqlite = nil  // the next test tries again
            throw error
        }
        try FileManager.default.copyItem(at: template, to: path)
        // Closing the last connection folds the log into the file; were one left, it goes along.
        let log = URL(fileURLWithPath: template.path + "-wal")
        if FileManager.default.fileExists(atPath: log.path) {
            try FileManager.default.copyItem(at: log, to: URL(fileURLWithPath: path.path + "-wal"))
        }
    }

    /// Makes the database `name` from the migrated template on the PostgreSQL server at `admin`.
    func copyPostgres(admin: String, to name: String) async throws {
        if postgres == nil {
            postgres = Task {
                let template = "twofold_template_\(UUID().uuidString.prefix(8).lowercased())"
                try await TestDatabase.onAdminDatabase(admin) { sql in
                    try await sql.raw("CREATE DATABASE \(ident: template)").run()
                }
                let base = admin[..<(admin.lastIndex(of: "/") ?? admin.endIndex)]
                let folder = try BuildProducts.temporaryDirectory("twofold-template")
                try await Self.migrate(.postgres(url: "\(base)/\(template)"), folder: folder)
                return template
            }
        }
        let template: String
        do {
            template = try await postgres!.value
        } catch {
            postgres = nil  // the next test tries again
            throw error
        }
        try await TestDatabase.onAdminDatabase(admin) { sql in
            try await sql.raw("CREATE DATABASE \(ident: name) TEMPLATE \(ident: template)").run()
        }
    }

    /// Runs every migration on `database`, then closes every connection to it.
    private static func migrate(_ database: Configuration.Database, folder: URL) async throws {
        let configuration = Configuration(
            mode: .development, dataDirectory: folder.appendingPathComponent("data"), database: database,
            postgresConnections: 2, postgresConnectTimeout: .seconds(60), bcryptCost: 4, runsBackgroundJobs: false)
        try await withApp { app in
            try await configure(app, with: configuration)
            try await app.autoMigrate()
        }
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
