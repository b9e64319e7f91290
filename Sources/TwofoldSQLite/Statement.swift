import Foundation

/// One SQL statement written with `?` placeholders, with its values typed: for the statements
/// every sign-in sends. On Twofold's own SQLite connection it runs without SQLKit's serializer,
/// encoders and Codable rows (values are bound and columns read by position, in the formats
/// sqlite-kit uses); on any other database it becomes an SQLKit query with the same binds.
package struct Statement: Sendable {
    /// A value for a placeholder. Each case keeps its type when empty, as PostgreSQL needs.
    package enum Value: Sendable {
        case text(String?)
        case integer(Int?)
        case uuid(UUID?)
        case date(Date?)
        case double(Double?)
    }

    package let sql: String
    package let values: [Value]
    /// A name for a statement whose text never changes and that runs on every sign-in: a
    /// database that keeps prepared statements (PostgreSQL) prepares it once per connection
    /// under this name. SQLite keeps every statement it has compiled, named or not.
    package private(set) var name: String?

    /// `sql` has one `?` per value and no `?` anywhere else (not in a string literal).
    package init(_ sql: String, _ values: Value...) {
        self.init(sql, values)
    }

    package init(_ sql: String, _ values: [Value]) {
        assert(sql.utf8.count(where: { $0 == UInt8(ascii: "?") }) == values.count, "one value per ?: \(sql)")
        self.sql = sql
        self.values = values
    }

    /// This statement, prepared under `name` where the database keeps prepared statements.
    package func named(_ name: String) -> Statement {
        var named = self
        named.name = name
        return named
    }

    /// `table.column AS prefix_column, …`: a table's columns for a select list, named so that
    /// they stay unique beside another table's (PostgreSQL's rows are read by name).
    package static func columns(_ names: [String], of table: String, as prefix: String) -> String {
        names.map { "\(table).\($0) AS \(prefix)_\($0)" }.joined(separator: ", ")
    }
}

/// One result row of a `Statement`, read by column position.
package struct StatementRow {
    private enum Source {
        case sqlite(DirectSQLiteConnection.Cursor)
        case other(any StatementColumns)
    }

    private let source: Source

    package init(_ cursor: DirectSQLiteConnection.Cursor) { source = .sqlite(cursor) }
    package init(_ columns: any StatementColumns) { source = .other(columns) }

    package func text(_ column: Int) throws -> String { try required(optionalText(column), column) }
    package func optionalText(_ column: Int) throws -> String? {
        switch source {
        case .sqlite(let cursor): try cursor.text(column)
        case .other(let row): try row.optionalText(column)
        }
    }
    package func integer(_ column: Int) throws -> Int { try required(optionalInteger(column), column) }
    package func optionalInteger(_ column: Int) throws -> Int? {
        switch source {
        case .sqlite(let cursor): try cursor.integer(column)
        case .other(let row): try row.optionalInteger(column)
        }
    }
    package func uuid(_ column: Int) throws -> UUID { try required(optionalUUID(column), column) }
    package func optionalUUID(_ column: Int) throws -> UUID? {
        switch source {
        case .sqlite(let cursor): try cursor.uuid(column)
        case .other(let row): try row.optionalUUID(column)
        }
    }
    package func date(_ column: Int) throws -> Date { try required(optionalDate(column), column) }
    package func double(_ column: Int) throws -> Double { try required(optionalDouble(column), column) }
    package func optionalDouble(_ column: Int) throws -> Double? {
        switch source {
        case .sqlite(let cursor): try cursor.double(column)
        case .other(let row): try row.optionalDouble(column)
        }
    }
    package func optionalDate(_ column: Int) throws -> Date? {
        switch source {
        case .sqlite(let cursor): try cursor.date(column)
        case .other(let row): try row.optionalDate(column)
        }
    }

    /// A boolean: 0 or 1 in SQLite, a boolean column in PostgreSQL.
    package func bool(_ column: Int) throws -> Bool {
        switch source {
        case .sqlite(let cursor): return try required(cursor.integer(column), column) != 0
        case .other(let row): return try row.bool(column)
        }
    }

    private func required<T>(_ value: T?, _ column: Int) throws -> T {
        guard let value else { throw StatementRowError(column: column, reason: "is NULL") }
        return value
    }
}

/// A row of another database (PostgreSQL's, through SQLKit), read by column position.
package protocol StatementColumns {
    func optionalText(_ column: Int) throws -> String?
    func optionalInteger(_ column: Int) throws -> Int?
    func optionalUUID(_ column: Int) throws -> UUID?
    func optionalDate(_ column: Int) throws -> Date?
    func optionalDouble(_ column: Int) throws -> Double?
    /// A boolean: a boolean column in PostgreSQL.
    func bool(_ column: Int) throws -> Bool
}

/// A column that could not be read as the type asked for.
package struct StatementRowError: Error, CustomStringConvertible {
    package let column: Int
    package let reason: String

    package init(column: Int, reason: String) {
        self.column = column
        self.reason = reason
    }
    package var description: String { "column \(column) \(reason)" }
}
