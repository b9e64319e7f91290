import Foundation
import Logging
import NIOCore
import SQLKit
import SQLiteKit
import SQLiteNIO

/// The direct connection as an SQLKit database, where `DatabaseExecutor` sends the stores'
/// statements. A statement sent from its thread, inside `UnitsOfWork.run`, runs
/// at once and joins the unit's write group; from elsewhere it hops there, runs and commits, as
/// sqlite-nio's own statements do.
struct DirectSQLiteDatabase: SQLDatabase {
    let connection: DirectSQLiteConnection
    let logger: Logger

    var eventLoop: any EventLoop { connection.thread.loop }
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        let statement: Serialized
        do { statement = try Serialized(query, on: self) } catch { return eventLoop.makeFailedFuture(error) }
        let connection = connection
        return eventLoop.submit {
            _ = try statement.run(on: connection, onRow)
            try connection.commit()
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        if connection.thread.isCurrent, let unit = WriteGroups.current {
            let statement = try Serialized(query, on: self)
            if let group = try statement.run(on: connection, onRow) { unit.record(group) }
        } else {
            try await execute(sql: query, onRow).get()
        }
    }

    /// Runs a typed statement: at once inside a unit of work on the connection's thread,
    /// else on the thread and committed, as `execute(sql:_:)` does.
    func rows<T: Sendable>(_ statement: Statement, _ read: @escaping @Sendable (StatementRow) throws -> T)
        async throws -> [T]
    {
        let connection = connection
        if connection.thread.isCurrent, let unit = WriteGroups.current {
            var rows: [T] = []
            let group = try connection.run(statement) { rows.append(try read(StatementRow($0))) }
            if let group { unit.record(group) }
            return rows
        }
        return try await eventLoop.submit {
            var rows: [T] = []
            _ = try connection.run(statement) { rows.append(try read(StatementRow($0))) }
            try connection.commit()
            return rows
        }.get()
    }

    /// Runs a typed statement that writes and answers how many rows it changed; where it runs
    /// and commits as `rows(_:_:)`.
    func changes(_ statement: Statement) async throws -> Int {
        let connection = connection
        if connection.thread.isCurrent, let unit = WriteGroups.current {
            let (group, changes) = try connection.changes(statement)
            if let group { unit.record(group) }
            return changes
        }
        return try await eventLoop.submit {
            let changes = try connection.changes(statement).changes
            try connection.commit()
            return changes
        }.get()
    }

    /// A serialized SQLKit statement with its binds as SQLite values.
    struct Serialized: Sendable {
        let sql: String
        let binds: [SQLiteData]

        init(_ query: any SQLExpression, on database: DirectSQLiteDatabase) throws {
            let (sql, binds) = database.serialize(query)
            let encoder = SQLiteDataEncoder()
            self.sql = sql
            // UUIDs (a dozen binds a sign-in) as the encoder writes them, without its formatting.
            self.binds = try binds.map { bind in
                if let uuid = bind as? UUID { return .text(uuid.canonicalText) }
                return try encoder.encode(bind)
            }
        }

        func run(on connection: DirectSQLiteConnection, _ onRow: @Sendable (any SQLRow) -> Void) throws -> UInt64? {
            try connection.run(sql, binds: binds) { columns, values in
                onRow(DirectSQLiteRow(columns: columns, values: values))
            }
        }
    }
}

/// The write groups a unit of work next to the database wrote in; it answers once they are
/// committed. Touched only on the direct connection's thread, which makes `@unchecked
/// Sendable` safe.
final class WriteGroups: @unchecked Sendable {
    @TaskLocal static var current: WriteGroups?

    private(set) var groups: [UInt64] = []

    func record(_ group: UInt64) {
        if groups.last != group { groups.append(group) }
    }
}

/// One result row of the direct connection, decoded as sqlite-kit decodes its rows.
struct DirectSQLiteRow: SQLRow {
    let columns: [String]
    let values: [SQLiteData]

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        guard let index = columns.firstIndex(of: column) else { return true }
        return values[index] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let index = columns.firstIndex(of: column) else {
            throw DecodingError.keyNotFound(
                SQLiteColumnKey(column),
                .init(codingPath: [], debugDescription: "no column \(column) in the result"))
        }
        // UUIDs as the decoder reads them, without its parsing.
        if case .text(let text) = values[index], D.self == UUID.self || D.self == UUID?.self,
            let uuid = UUID(canonicalText: text)
        {
            return uuid as! D
        }
        return try SQLiteDataDecoder().decode(D.self, from: values[index])
    }

    private struct SQLiteColumnKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
