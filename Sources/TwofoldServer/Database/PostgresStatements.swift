import Foundation
import Logging
import NIOSSL
import PostgresKit
import PostgresNIO
import TwofoldSQLite
import Vapor

/// The stores' statements on PostgreSQL, sent straight through PostgresNIO's client: each
/// `Statement` becomes one extended-protocol query (its `?`s numbered `$1…`, its values bound with
/// their types), one round trip, and its rows are read by position. Fluent keeps its own pool
/// for the migrations; SQLKit's serializer, its Codable encoders and its rows read by name are
/// not on this path.
struct PostgresStatements: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// A client for the database at `url` (a `postgres://` URL, as Fluent reads it), not yet
    /// running: `run()` it for as long as the server runs.
    static func client(url: String, logger: Logger) throws -> PostgresClient {
        let core = try SQLPostgresConfiguration(url: url).coreConfiguration
        guard let host = core.host else { throw PostgresStatementsError.noHost }
        let tls: PostgresClient.Configuration.TLS =
            core.tls.isEnforced
            ? .require(.makeClientConfiguration())
            : core.tls.isAllowed ? .prefer(.makeClientConfiguration()) : .disable
        var configuration = PostgresClient.Configuration(
            host: host, port: core.port ?? 5432, username: core.username, password: core.password,
            database: core.database, tls: tls)
        configuration.options.maximumConnections = 16
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    func rows<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T] {
        var rows: [T] = []
        for try await row in try await client.query(Self.query(statement), logger: logger) {
            rows.append(try read(StatementRow(PostgresColumns(row: row.makeRandomAccess()))))
        }
        return rows
    }

    /// `statement` as a PostgreSQL query: its `?`s numbered `$1`, `$2`, … in order, and its
    /// values bound with their types (a `nil` keeps its type, as PostgreSQL needs).
    static func query(_ statement: Statement) -> PostgresQuery {
        var sql = ""
        sql.reserveCapacity(statement.sql.utf8.count + 2 * statement.values.count)
        var number = 0
        for character in statement.sql {
            if character == "?" {
                number += 1
                sql += "$\(number)"
            } else {
                sql.append(character)
            }
        }
        var bindings = PostgresBindings(capacity: statement.values.count)
        for value in statement.values {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .uuid(let uuid): bindings.append(uuid)
            case .date(let date): bindings.append(date)
            case .double(let double): bindings.append(double)
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }
}

/// A PostgreSQL row read by column position.
struct PostgresColumns: StatementColumns {
    let row: PostgresRandomAccessRow

    private func read<T: PostgresDecodable>(_ column: Int, as type: T.Type) throws -> T? where T._DecodableType == T {
        guard column < row.count else { throw StatementRowError(column: column, reason: "does not exist") }
        return try row[column].decode(T?.self)
    }

    func optionalText(_ column: Int) throws -> String? { try read(column, as: String.self) }
    func optionalInteger(_ column: Int) throws -> Int? { try read(column, as: Int.self) }
    func optionalUUID(_ column: Int) throws -> UUID? { try read(column, as: UUID.self) }
    func optionalDate(_ column: Int) throws -> Date? { try read(column, as: Date.self) }
    func optionalDouble(_ column: Int) throws -> Double? { try read(column, as: Double.self) }
    func bool(_ column: Int) throws -> Bool {
        guard let value = try read(column, as: Bool.self) else {
            throw StatementRowError(column: column, reason: "is NULL")
        }
        return value
    }
}

enum PostgresStatementsError: Error, CustomStringConvertible {
    case noHost
    var description: String { "DATABASE_URL names no PostgreSQL host" }
}

/// Runs a PostgreSQL client from start-up until the application shuts down. It starts at once,
/// not when the application boots: the migrations and the tests may query before that.
final class PostgresClientRunner: LifecycleHandler, Sendable {
    private let task: Task<Void, Never>

    init(client: PostgresClient) {
        task = Task { await client.run() }
    }

    func shutdownAsync(_ application: Application) async {
        task.cancel()
        await task.value
    }
}
