import Foundation
import NIOConcurrencyHelpers
import VaporCSQLite

/// Read-only connections to the SQLite file, one per thread that reads, so a read runs where
/// the request already is: no hop to the writer's thread and back, and no time taken from the
/// writer, which every sign-in in the process waits for.
///
/// In write-ahead-log mode a reader never waits for the writer: each statement reads the last
/// committed state. A unit of work answers only after its commit, so whatever a client has been
/// told is visible to its next read. What a read decides is not a claim: the writes that follow
/// it re-check their conditions atomically (conditional `UPDATE`s, their changed rows counted),
/// so a row that changed in between is refused there, not overwritten.
///
/// A read is a few page lookups in pages SQLite or the OS has cached (microseconds), so it runs on
/// the calling thread, event loops included.
package final class SQLiteReaders: Sendable {
    private let path: String
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// By thread (`pthread_self`). A thread's connection is only used on that thread; the
        /// lock guards the table and the totals, not the connections' use.
        var handles: [UInt: Reader] = [:]
        var closed = false
        var fullScanSteps = 0
        var reprepares = 0
    }

    /// One thread's connection; used only on that thread (or at close, when no thread reads),
    /// which makes the `@unchecked Sendable` safe.
    private final class Reader: @unchecked Sendable {
        let handle: SQLiteHandle
        init(_ handle: SQLiteHandle) { self.handle = handle }
    }

    package init(path: String) {
        self.path = path
    }

    /// Runs the read-only `statement` on this thread's connection, reading each row with `read`.
    package func rows<T>(_ statement: Statement, _ read: (StatementRow) throws -> T) throws -> [T] {
        let reader = try current()
        let before = (reader.handle.fullScanSteps, reader.handle.reprepares)
        defer {
            let scans = reader.handle.fullScanSteps - before.0
            let recompiled = reader.handle.reprepares - before.1
            if scans != 0 || recompiled != 0 {
                state.withLockedValue {
                    $0.fullScanSteps += scans
                    $0.reprepares += recompiled
                }
            }
        }
        var rows: [T] = []
        try reader.handle.run(statement) { rows.append(try read(StatementRow($0))) }
        return rows
    }

    /// Rows the readers stepped over in full table scans so far, and how often they compiled a
    /// kept statement again (read by tests).
    package var statementCosts: (fullScanSteps: Int, reprepares: Int) {
        state.withLockedValue { ($0.fullScanSteps, $0.reprepares) }
    }

    /// Closes every connection; later reads fail. Call when nothing reads any more (shutdown).
    package func close() {
        let readers = state.withLockedValue { state in
            state.closed = true
            defer { state.handles = [:] }
            return Array(state.handles.values)
        }
        for reader in readers { reader.handle.close() }
    }

    private func current() throws -> Reader {
        let thread = Self.currentThread
        if let reader = try state.withLockedValue({ state -> Reader? in
            guard !state.closed else { throw DirectSQLiteError(status: SQLITE_MISUSE, message: "readers closed") }
            return state.handles[thread]
        }) {
            return reader
        }
        let reader = Reader(try SQLiteHandle(path: path, readOnly: true))
        let kept = state.withLockedValue { state -> Reader? in
            guard !state.closed else { return nil }
            state.handles[thread] = reader
            return reader
        }
        guard let kept else {
            reader.handle.close()
            throw DirectSQLiteError(status: SQLITE_MISUSE, message: "readers closed")
        }
        return kept
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }
}
