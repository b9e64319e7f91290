import Logging
import NIOCore

/// Twofold's own SQLite connection and its thread, for a database file (`sqlite::memory:` is one
/// too, in a temporary folder; not used for PostgreSQL). The stores' statements go to it, and
/// their reads of committed state (`SQLExecutor.readCommitted`) to the readers, one read-only
/// connection per thread that reads. Beside them a checkpointer, on a thread and
/// connection of its own, moves the write-ahead log into the database file four times a
/// second: a checkpoint waits for the disk (fsync), which must not happen between sign-ins.
/// After each checkpoint it has the part of the log the writer overwrites next read into memory
/// (`WALReadAhead`).
/// Both close at shutdown.
package struct DirectSQLite: Sendable {
    package static let checkpointInterval = TimeAmount.milliseconds(250)

    /// The database file.
    package let path: String
    package let thread: SQLiteThread
    package let database: DirectSQLiteDatabase
    package let readers: SQLiteReaders
    package let checkpointer: SQLiteThread
    package let checkpoints: DirectSQLiteConnection
    package let readAhead: WALReadAhead
    package let schedule: RepeatedTask

    package static func open(path: String, logger: Logger) async throws -> DirectSQLite {
        let thread = SQLiteThread()
        let checkpointer = SQLiteThread()
        do {
            let connection = try await DirectSQLiteConnection.open(path: path, thread: thread)
            try await thread.loop.submit { thread.afterEachJob = connection.commitSoon }.get()
            let checkpoints = try await DirectSQLiteConnection.open(
                path: path, thread: checkpointer, groupsWrites: false)
            let pageSize = try await checkpointer.loop.submit {
                var size = 4096
                _ = try checkpoints.run(Statement("PRAGMA page_size")) { size = try $0.integer(0) ?? size }
                return size
            }.get()
            let readAhead = WALReadAhead(databasePath: path, pageSize: pageSize)
            let schedule = checkpointer.loop.scheduleRepeatedTask(
                initialDelay: checkpointInterval, delay: checkpointInterval
            ) { _ in
                do {
                    if let log = try checkpoint(checkpoints) {
                        readAhead.prefetch(framesInLog: log.frames, backfilled: log.backfilled)
                    }
                } catch {
                    logger.warning(
                        "SQLite checkpoint failed; the next one tries again", metadata: ["error": "\(error)"])
                }
            }
            return DirectSQLite(
                path: path, thread: thread, database: DirectSQLiteDatabase(connection: connection),
                readers: SQLiteReaders(path: path),
                checkpointer: checkpointer, checkpoints: checkpoints, readAhead: readAhead, schedule: schedule)
        } catch {
            try? await thread.shutdown()
            try? await checkpointer.shutdown()
            throw error
        }
    }

    /// Moves what it can of the write-ahead log into the database without waiting for readers or
    /// the writer (`PASSIVE`), and answers how many frames the log holds and how many of them are
    /// now in the database (nil if SQLite answered no such row).
    package static func checkpoint(_ connection: DirectSQLiteConnection) throws -> (frames: Int, backfilled: Int)? {
        var log: (frames: Int, backfilled: Int)?
        // One row: busy (0 or 1), frames in the log, frames moved into the database.
        _ = try connection.run(Statement("PRAGMA wal_checkpoint(PASSIVE)")) { row in
            if let frames = try row.integer(1), let backfilled = try row.integer(2) { log = (frames, backfilled) }
        }
        return log
    }

    /// Rows the direct connection and the readers stepped over in full table scans so far, and
    /// how often they compiled a cached statement again.
    package func statementCosts() async throws -> (fullScanSteps: Int, reprepares: Int) {
        let connection = database.connection
        let written = try await thread.loop.submit { (connection.fullScanSteps, connection.reprepares) }.get()
        let read = readers.statementCosts
        return (written.0 + read.fullScanSteps, written.1 + read.reprepares)
    }

    /// How many write groups the direct connection has committed.
    package func commitCount() async throws -> Int {
        let connection = database.connection
        return try await thread.loop.submit { connection.commits }.get()
    }

    /// Stops the checkpointer and closes every connection and thread.
    package func close() async {
        let connection = database.connection
        let checkpoints = checkpoints
        let readAhead = readAhead
        let stopped = checkpointer.loop.makePromise(of: Void.self)
        schedule.cancel(promise: stopped)
        try? await stopped.futureResult.get()
        try? await checkpointer.loop.submit {
            readAhead.close()
            checkpoints.close()
        }.get()
        try? await thread.loop.submit { connection.close() }.get()
        readers.close()
        try? await checkpointer.shutdown()
        try? await thread.shutdown()
    }
}
