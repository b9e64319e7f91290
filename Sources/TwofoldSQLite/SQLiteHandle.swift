import Foundation
import VaporCSQLite

/// One open SQLite connection and its compiled statements: preparing once and keeping, binding
/// typed values, stepping, reading rows by position. The writer (`DirectSQLiteConnection`) and
/// the readers (`SQLiteReaders`) are built on it.
///
/// It goes through the same SQLite library that sqlite-nio carries (its `VaporCSQLite` module):
/// two copies of SQLite in one process would each keep their own table of POSIX locks, and
/// closing a file in one would drop the other's locks (sqlite.org/howtocorrupt.html §2.2.1).
///
/// Not thread-safe: its owner uses it from one thread at a time.
package final class SQLiteHandle {
    package struct Prepared {
        let statement: OpaquePointer
        let columns: [String]
        let parameterCount: Int
        /// Kept for the next use; a transient one is finalized after this use.
        let isCached: Bool

        /// Ready for the next use (or gone, when transient). The bindings stay: every use binds
        /// every parameter again (`run` checks the count), and `sqlite3_clear_bindings` would
        /// expire a statement whose plan looked at a bound value, making SQLite compile it again
        /// on its next step.
        func release() {
            if isCached {
                sqlite_nio_sqlite3_reset(statement)
            } else {
                sqlite_nio_sqlite3_finalize(statement)
            }
        }
    }

    private var handle: OpaquePointer?
    private var prepared: [String: Prepared] = [:]
    /// Statements built with varying text (lists of binds) would fill the cache for nothing:
    /// past this many, new ones are prepared for one use.
    private static let cacheLimit = 512

    /// Rows stepped over in full table scans so far (`SQLITE_STMTSTATUS_FULLSCAN_STEP`): a
    /// statement without an index to read costs time in proportion to its table (read by tests).
    private(set) var fullScanSteps = 0
    /// Times SQLite compiled a cached statement again before running it (read by tests: a
    /// statement should be compiled once).
    private(set) var reprepares = 0

    /// Opens `path` with the settings every connection to the file shares (`SQLiteTuning`).
    /// A `readOnly` handle refuses to write (`PRAGMA query_only`).
    package init(path: String, readOnly: Bool = false) throws {
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var opened: OpaquePointer?
        let status = sqlite_nio_sqlite3_open_v2(path, &opened, flags, nil)
        handle = opened
        guard status == SQLITE_OK, opened != nil else {
            let error = DirectSQLiteError(status: status, message: opened.map(Self.message) ?? "cannot open")
            sqlite_nio_sqlite3_close(opened)
            handle = nil
            throw error
        }
        do {
            for pragma in SQLitePragmas.all { try execute(pragma) }
            if readOnly { try execute("PRAGMA query_only = 1") }
        } catch {
            close()
            throw error
        }
    }

    /// Whether no transaction is open (SQLite's autocommit mode).
    package var isAutocommit: Bool { handle.map { sqlite_nio_sqlite3_get_autocommit($0) != 0 } ?? true }

    /// The rows the last completed INSERT, UPDATE or DELETE inserted, updated or deleted
    /// (`sqlite3_changes64`): read it right after running a statement that writes.
    package var changes: Int { handle.map { Int(sqlite_nio_sqlite3_changes64($0)) } ?? 0 }

    /// Runs a statement: prepare (or reuse), check the parameter count, `bind`, call `willWrite`
    /// when the statement writes, step calling `onRow` for each row, count, release.
    package func run(
        _ sql: String, parameters: Int, bind: (OpaquePointer) throws -> Void,
        willWrite: () throws -> Void = {}, onRow: (OpaquePointer, [String]) throws -> Void
    ) throws {
        guard let handle else { throw DirectSQLiteError(status: SQLITE_MISUSE, message: "connection closed") }
        let statement = try prepare(sql, on: handle)
        defer {
            fullScanSteps += Int(
                sqlite_nio_sqlite3_stmt_status(statement.statement, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1))
            reprepares += Int(sqlite_nio_sqlite3_stmt_status(statement.statement, SQLITE_STMTSTATUS_REPREPARE, 1))
            statement.release()
        }
        guard parameters == statement.parameterCount else {
            throw DirectSQLiteError(
                status: SQLITE_RANGE,
                message: "\(parameters) values bound to a statement with \(statement.parameterCount) parameters")
        }
        if sqlite_nio_sqlite3_stmt_readonly(statement.statement) == 0 { try willWrite() }
        try bind(statement.statement)
        while true {
            let status = sqlite_nio_sqlite3_step(statement.statement)
            if status == SQLITE_DONE { return }
            try check(status == SQLITE_ROW ? SQLITE_OK : status)
            try onRow(statement.statement, statement.columns)
        }
    }

    /// Runs a typed statement, reading each row through a `Cursor` (no values are copied until
    /// asked for).
    package func run(_ statement: Statement, willWrite: () throws -> Void = {}, onRow: (Cursor) throws -> Void) throws {
        try run(statement.sql, parameters: statement.values.count) { prepared in
            for (offset, value) in statement.values.enumerated() {
                try check(Self.bind(value, at: Int32(offset + 1), to: prepared))
            }
        } willWrite: {
            try willWrite()
        } onRow: { prepared, _ in
            try onRow(Cursor(statement: prepared))
        }
    }

    /// A statement outside the write groups (transaction control, settings), run to completion.
    package func execute(_ sql: String) throws {
        guard let handle else { throw DirectSQLiteError(status: SQLITE_MISUSE, message: "connection closed") }
        let prepared = try prepare(sql, on: handle)
        defer { prepared.release() }
        var status = sqlite_nio_sqlite3_step(prepared.statement)
        while status == SQLITE_ROW { status = sqlite_nio_sqlite3_step(prepared.statement) }
        guard status == SQLITE_DONE else { throw DirectSQLiteError(status: status, message: Self.message(handle)) }
    }

    package func close() {
        for statement in prepared.values { sqlite_nio_sqlite3_finalize(statement.statement) }
        prepared = [:]
        sqlite_nio_sqlite3_close(handle)
        handle = nil
    }

    /// A result row of a typed statement, read by column position in the formats sqlite-kit
    /// writes (UUIDs as text, dates as seconds since 1970, booleans as 0 or 1). Valid only
    /// inside the `onRow` call it is given to.
    package struct Cursor {
        fileprivate let statement: OpaquePointer

        func text(_ column: Int) throws -> String? {
            let index = Int32(column)
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_NULL: return nil
            case SQLITE_TEXT:
                guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return "" }
                let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
                return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
            default: throw StatementRowError(column: column, reason: "is not text")
            }
        }

        func integer(_ column: Int) throws -> Int? {
            let index = Int32(column)
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_NULL: return nil
            case SQLITE_INTEGER: return Int(sqlite_nio_sqlite3_column_int64(statement, index))
            default: throw StatementRowError(column: column, reason: "is not an integer")
            }
        }

        func double(_ column: Int) throws -> Double? {
            let index = Int32(column)
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_NULL: return nil
            case SQLITE_FLOAT: return sqlite_nio_sqlite3_column_double(statement, index)
            case SQLITE_INTEGER: return Double(sqlite_nio_sqlite3_column_int64(statement, index))
            default: throw StatementRowError(column: column, reason: "is not a number")
            }
        }

        func uuid(_ column: Int) throws -> UUID? {
            let index = Int32(column)
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_NULL: return nil
            case SQLITE_TEXT:
                let text = sqlite_nio_sqlite3_column_text(statement, index)
                let count = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
                guard let uuid = UUID(canonicalBytes: UnsafeBufferPointer(start: text, count: count)) else {
                    throw StatementRowError(column: column, reason: "is not a UUID")
                }
                return uuid
            default: throw StatementRowError(column: column, reason: "is not text")
            }
        }

        func date(_ column: Int) throws -> Date? {
            let index = Int32(column)
            let seconds: Double
            switch sqlite_nio_sqlite3_column_type(statement, index) {
            case SQLITE_NULL: return nil
            case SQLITE_FLOAT: seconds = sqlite_nio_sqlite3_column_double(statement, index)
            case SQLITE_INTEGER: seconds = Double(sqlite_nio_sqlite3_column_int64(statement, index))
            default: throw StatementRowError(column: column, reason: "is not a time")
            }
            // Rounded to microseconds, as sqlite-nio reads dates, so the two agree exactly.
            let sinceReference = seconds - Date.timeIntervalBetween1970AndReferenceDate
            return Date(timeIntervalSinceReferenceDate: (sinceReference * 1e6).rounded() / 1e6)
        }
    }

    /// Throws the connection's error for a status other than `SQLITE_OK`.
    private func check(_ status: Int32) throws {
        guard status != SQLITE_OK else { return }
        throw DirectSQLiteError(status: status, message: handle.map(Self.message) ?? "connection closed")
    }

    private func prepare(_ sql: String, on handle: OpaquePointer) throws -> Prepared {
        if let cached = prepared[sql] { return cached }
        var statement: OpaquePointer?
        let keeps = prepared.count < Self.cacheLimit
        let status = sqlite_nio_sqlite3_prepare_v3(
            handle, sql, -1, keeps ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw DirectSQLiteError(status: status, message: Self.message(handle))
        }
        let count = sqlite_nio_sqlite3_column_count(statement)
        let columns = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
        let entry = Prepared(
            statement: statement, columns: columns,
            parameterCount: Int(sqlite_nio_sqlite3_bind_parameter_count(statement)), isCached: keeps)
        if entry.isCached { prepared[sql] = entry }
        return entry
    }

    private static func bind(_ value: Statement.Value, at index: Int32, to statement: OpaquePointer) -> Int32 {
        switch value {
        case .text(let text?):
            return sqlite_nio_sqlite3_bind_text64(
                statement, index, text, UInt64(text.utf8.count), transient, UInt8(SQLITE_UTF8))
        case .integer(let integer?):
            return sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
        case .uuid(let uuid?):
            return bind(Statement.Value.text(uuid.canonicalText), at: index, to: statement)
        case .date(let date?):
            return sqlite_nio_sqlite3_bind_double(statement, index, date.timeIntervalSince1970)
        case .double(let double?):
            return sqlite_nio_sqlite3_bind_double(statement, index, double)
        case .text(nil), .integer(nil), .uuid(nil), .date(nil), .double(nil):
            return sqlite_nio_sqlite3_bind_null(statement, index)
        }
    }

    private static func message(_ handle: OpaquePointer) -> String {
        String(cString: sqlite_nio_sqlite3_errmsg(handle))
    }
}

/// SQLite copies the bytes of a bound text or blob (`SQLITE_TRANSIENT`, a C macro Swift cannot
/// import).
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// An SQLite error from Twofold's own connections (the stores ask `isConstraintFailure`: a
/// unique-constraint failure on registration, for example).
package struct DirectSQLiteError: Error, CustomStringConvertible {
    package let status: Int32
    package let message: String

    package var primaryStatus: Int32 { status & 0xff }
    package var isSyntaxError: Bool { primaryStatus == SQLITE_ERROR }
    package var isConstraintFailure: Bool { primaryStatus == SQLITE_CONSTRAINT }
    package var isConnectionClosed: Bool { primaryStatus == SQLITE_MISUSE }
    package var description: String { "SQLite error \(status): \(message)" }
}
