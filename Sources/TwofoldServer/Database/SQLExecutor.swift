import FluentKit
import Foundation
import Logging
import NIOCore
import SQLKit
import TwofoldSQLite

/// Where a store's statements run: the one way to the database for code that is not a
/// migration. Each `Statement` is written once, in SQL that SQLite and PostgreSQL both accept.
protocol SQLExecutor: Sendable {
    /// Runs `statement` and reads each row it returns with `read`.
    func rows<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T]

    /// Runs `statement`, an INSERT, UPDATE or DELETE without a `RETURNING` clause, and answers
    /// how many rows it changed: for a conditional update that claims something, one when this
    /// caller won it and none when another did (or the condition no longer held).
    func changes(_ statement: Statement) async throws -> Int

    /// Runs `first`, then `second` once `first` is committed (each its own statement, not one
    /// unit): on PostgreSQL on one connection, one lease from the pool for both.
    func rows<A: Sendable, B: Sendable>(
        _ first: Statement, _ readFirst: @escaping @Sendable (StatementRow) throws -> A,
        then second: Statement, _ readSecond: @escaping @Sendable (StatementRow) throws -> B
    ) async throws -> ([A], [B])

    /// Runs `statement`, which only reads, where the caller is: the last committed state, so not
    /// the writes of a unit of work still running (read before the unit, not inside it).
    func readCommitted<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T]

    /// Whether this is PostgreSQL (whose statements may lock rows `FOR SHARE` and need a type for
    /// each placeholder in a select list); SQLite runs one writer at a time and needs neither.
    var isPostgreSQL: Bool { get }
}

extension SQLExecutor {
    var isPostgreSQL: Bool { false }

    func readCommitted<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T] {
        try await rows(statement, read)
    }

    /// One after the other, each on its own.
    func rows<A: Sendable, B: Sendable>(
        _ first: Statement, _ readFirst: @escaping @Sendable (StatementRow) throws -> A,
        then second: Statement, _ readSecond: @escaping @Sendable (StatementRow) throws -> B
    ) async throws -> ([A], [B]) {
        (try await rows(first, readFirst), try await rows(second, readSecond))
    }

    /// Runs `statement` and counts the rows it returns.
    func count(_ statement: Statement) async throws -> Int {
        try await rows(statement) { _ in true }.count
    }

    /// Runs `statement`, which returns no rows (or none that matter).
    func run(_ statement: Statement) async throws {
        _ = try await count(statement)
    }

    /// Inserts `rows` (each one value per column of `columns`, a comma-separated list) into
    /// `table`, `chunk` rows to a statement: within both databases' limits on bound values.
    func insert(into table: String, columns: String, rows: [[Statement.Value]], chunk: Int = 200) async throws {
        let width = columns.split(separator: ",").count
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        var start = rows.startIndex
        while start < rows.endIndex {
            let part = rows[start..<min(start + chunk, rows.endIndex)]
            try await run(
                Statement(
                    "INSERT INTO \(table) (\(columns)) VALUES "
                        + Array(repeating: tuple, count: part.count).joined(separator: ", "),
                    part.flatMap { $0 }))
            start = part.endIndex
        }
    }
}

/// The server's database: Twofold's own connection for an SQLite file (inside a unit of work,
/// that unit's transaction), PostgresNIO's client for PostgreSQL, else SQLKit on the database
/// it is given (the server always has one of the first two: `sqlite::memory:` is a temporary file).
struct DatabaseExecutor: SQLExecutor {
    let direct: DirectSQLite?
    var postgres: PostgresStatements? = nil
    /// SQLKit's view of the configured database, for PostgreSQL and in-memory SQLite.
    let sql: @Sendable () throws -> any SQLDatabase

    var isPostgreSQL: Bool { postgres != nil }

    /// For `databases` (as configured at start-up), on any of `group`'s event loops.
    init(
        direct: DirectSQLite?, postgres: PostgresStatements? = nil, databases: Databases, group: any EventLoopGroup,
        logger: Logger
    ) {
        self.direct = direct
        self.postgres = postgres
        self.sql = {
            guard let sql = databases.database(logger: logger, on: group.any()) as? any SQLDatabase else {
                throw DatabaseExecutorError.notSQL
            }
            return sql
        }
    }

    init(direct: DirectSQLite?, sql: @escaping @Sendable () throws -> any SQLDatabase) {
        self.direct = direct
        self.sql = sql
    }

    func rows<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T] {
        if let direct { return try await direct.database.rows(statement, read) }
        if let postgres { return try await postgres.rows(statement, read) }
        return try await sql().raw(statement.query).all().map { try read(StatementRow(SQLKitColumns($0))) }
    }

    /// With an SQLite file, on this thread's read-only connection (`SQLiteReaders`), without a
    /// hop to the writer's thread or time taken from it.
    func readCommitted<T: Sendable>(
        _ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T
    ) async throws -> [T] {
        if let direct { return try direct.readers.rows(statement, read) }
        return try await rows(statement, read)
    }

    func rows<A: Sendable, B: Sendable>(
        _ first: Statement, _ readFirst: @escaping @Sendable (StatementRow) throws -> A,
        then second: Statement, _ readSecond: @escaping @Sendable (StatementRow) throws -> B
    ) async throws -> ([A], [B]) {
        if direct == nil, let postgres { return try await postgres.rows(first, readFirst, then: second, readSecond) }
        return (try await rows(first, readFirst), try await rows(second, readSecond))
    }

    func changes(_ statement: Statement) async throws -> Int {
        if let direct { return try await direct.database.changes(statement) }
        // PostgreSQL counts what it changed by returning a row for each.
        return try await count(Statement(statement.sql + " RETURNING 1", statement.values))
    }
}

enum DatabaseExecutorError: Error, CustomStringConvertible {
    case notSQL
    var description: String { "Twofold needs an SQL database" }
}

/// The direct connection's errors answer the same `DatabaseError` questions as Fluent's drivers
/// (a store asks `isConstraintFailure` of a unique index, whichever database refused).
extension DirectSQLiteError: DatabaseError {}

extension Statement {
    /// The statement as SQLKit builds it, each `?` a bind.
    var query: SQLQueryString {
        var query = SQLQueryString("")
        var values = values.makeIterator()
        var pieces = sql.split(separator: "?", omittingEmptySubsequences: false).makeIterator()
        if let first = pieces.next() { query.appendLiteral(String(first)) }
        while let piece = pieces.next() {
            switch values.next() {
            case .text(let value): query.appendInterpolation(bind: value)
            case .integer(let value): query.appendInterpolation(bind: value)
            case .uuid(let value): query.appendInterpolation(bind: value)
            case .date(let value): query.appendInterpolation(bind: value)
            case .double(let value): query.appendInterpolation(bind: value)
            case nil: query.appendLiteral("?")  // more placeholders than values: the database refuses it
            }
            query.appendLiteral(String(piece))
        }
        return query
    }
}

/// An SQLKit row (PostgreSQL's, or in-memory SQLite's) read by column position. SQLKit reads by
/// name, so a column whose name another column shares is refused (give it an `AS` alias).
struct SQLKitColumns: StatementColumns {
    let row: any SQLRow
    let names: [String]

    init(_ row: any SQLRow) {
        self.row = row
        names = row.allColumns
    }

    private func name(of column: Int) throws -> String {
        guard column < names.count else { throw StatementRowError(column: column, reason: "does not exist") }
        guard names.firstIndex(of: names[column]) == column, names.lastIndex(of: names[column]) == column else {
            throw StatementRowError(column: column, reason: "has the same name as another (\(names[column]))")
        }
        return names[column]
    }

    private func read<T: Decodable>(_ column: Int, as type: T.Type) throws -> T? {
        try row.decode(column: try name(of: column), as: T?.self)
    }

    func optionalText(_ column: Int) throws -> String? { try read(column, as: String.self) }
    func optionalInteger(_ column: Int) throws -> Int? { try read(column, as: Int.self) }
    func optionalUUID(_ column: Int) throws -> UUID? { try read(column, as: UUID.self) }
    func optionalDate(_ column: Int) throws -> Date? { try read(column, as: Date.self) }
    func optionalDouble(_ column: Int) throws -> Double? { try read(column, as: Double.self) }
    func bool(_ column: Int) throws -> Bool { try row.decode(column: try name(of: column), as: Bool.self) }
}
