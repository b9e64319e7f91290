import Foundation
import SQLKit
import Vapor

/// One SQL statement written with `?` placeholders, with its values typed: for the statements
/// every sign-in sends. On Twofold's own SQLite connection it runs without SQLKit's serializer,
/// encoders and Codable rows (values are bound and columns read by position, in the formats
/// sqlite-kit uses); on any other database it becomes an SQLKit query with the same binds.
struct Statement: Sendable {
    /// A value for a placeholder. Each case keeps its type when empty, as PostgreSQL needs.
    enum Value: Sendable {
        case text(String?)
        case integer(Int?)
        case uuid(UUID?)
        case date(Date?)
        case double(Double?)
    }

    let sql: String
    let values: [Value]

    /// `sql` has one `?` per value and no `?` anywhere else (not in a string literal).
    init(_ sql: String, _ values: Value...) {
        self.init(sql, values)
    }

    init(_ sql: String, _ values: [Value]) {
        assert(sql.utf8.count(where: { $0 == UInt8(ascii: "?") }) == values.count, "one value per ?: \(sql)")
        self.sql = sql
        self.values = values
    }

    /// `table.column AS prefix_column, …`: a table's columns for a select list, named so that
    /// they stay unique beside another table's (PostgreSQL's rows are read by name).
    static func columns(_ names: [String], of table: String, as prefix: String) -> String {
        names.map { "\(table).\($0) AS \(prefix)_\($0)" }.joined(separator: ", ")
    }

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

/// One result row of a `Statement`, read by column position.
struct StatementRow {
    fileprivate enum Source {
        case sqlite(DirectSQLiteConnection.Cursor)
        case sqlKit(any SQLRow, [String])
    }

    fileprivate let source: Source

    init(_ cursor: DirectSQLiteConnection.Cursor) { source = .sqlite(cursor) }
    init(_ row: any SQLRow) { source = .sqlKit(row, row.allColumns) }

    /// The name to read column `column` by from an SQLKit row, which reads by name: refused
    /// when another column has the same name (give it an `AS` alias in the statement).
    private static func name(of column: Int, in names: [String]) throws -> String {
        guard column < names.count else { throw StatementRowError(column: column, reason: "does not exist") }
        guard names.firstIndex(of: names[column]) == column, names.lastIndex(of: names[column]) == column else {
            throw StatementRowError(column: column, reason: "has the same name as another (\(names[column]))")
        }
        return names[column]
    }

    func text(_ column: Int) throws -> String { try required(optionalText(column), column) }
    func optionalText(_ column: Int) throws -> String? { try read(column, DirectSQLiteConnection.Cursor.text) }
    func integer(_ column: Int) throws -> Int { try required(optionalInteger(column), column) }
    func optionalInteger(_ column: Int) throws -> Int? { try read(column, DirectSQLiteConnection.Cursor.integer) }
    func uuid(_ column: Int) throws -> UUID { try required(optionalUUID(column), column) }
    func optionalUUID(_ column: Int) throws -> UUID? { try read(column, DirectSQLiteConnection.Cursor.uuid) }
    func date(_ column: Int) throws -> Date { try required(optionalDate(column), column) }
    func double(_ column: Int) throws -> Double { try required(optionalDouble(column), column) }
    func optionalDouble(_ column: Int) throws -> Double? { try read(column, DirectSQLiteConnection.Cursor.double) }
    func optionalDate(_ column: Int) throws -> Date? { try read(column, DirectSQLiteConnection.Cursor.date) }

    /// A boolean: 0 or 1 in SQLite, a boolean column in PostgreSQL.
    func bool(_ column: Int) throws -> Bool {
        switch source {
        case .sqlite(let cursor): return try required(cursor.integer(column), column) != 0
        case .sqlKit(let row, let names):
            return try row.decode(column: try Self.name(of: column, in: names), as: Bool.self)
        }
    }

    /// Column `column` through the cursor's reader for the direct connection, else decoded by
    /// name from the SQLKit row.
    private func read<T: Decodable>(
        _ column: Int, _ sqlite: (DirectSQLiteConnection.Cursor) -> (Int) throws -> T?
    ) throws -> T? {
        switch source {
        case .sqlite(let cursor): return try sqlite(cursor)(column)
        case .sqlKit(let row, let names):
            return try row.decode(column: try Self.name(of: column, in: names), as: T?.self)
        }
    }

    private func required<T>(_ value: T?, _ column: Int) throws -> T {
        guard let value else { throw StatementRowError(column: column, reason: "is NULL") }
        return value
    }
}

/// A column that could not be read as the type asked for.
struct StatementRowError: Error, CustomStringConvertible {
    let column: Int
    let reason: String
    var description: String { "column \(column) \(reason)" }
}
