import Logging
import NIOCore
import Vapor

/// Twofold's own SQLite connection and its thread, for a database file (not used for
/// PostgreSQL, nor for `sqlite::memory:`, whose memory Fluent's connections share among
/// themselves). The stores' statements go to it, and their reads of committed state
/// (`SQLExecutor.readCommitted`) to the readers, one read-only connection per thread that reads. Beside them a checkpointer, on a thread and
/// connection of its own, moves the write-ahead log into the database file four times a
/// second: a checkpoint waits for the disk (fsync), which must not happen between sign-ins.
/// After each checkpoint it has the part of the log the writer overwrites next read into memory
/// (`WALReadAhead`).
/// Both close at shutdown.
struct DirectSQLite: Sendable, LifecycleHandler {
    static let checkpointInterval = TimeAmount.milliseconds(250)

    let thread: SQLiteThread
    let database: DirectSQLiteDatabase
    let readers: SQLiteReaders
    let checkpointer: SQLiteThread
    let checkpoints: DirectSQLiteConnection
    let readAhead: WALReadAhead
    let schedule: RepeatedTask

    static func open(path: String, logger: Logger) async throws -> DirectSQLite {
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
                thread: thread, database: DirectSQLiteDatabase(connection: connection, logger: logger),
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
    static func checkpoint(_ connection: DirectSQLiteConnection) throws -> (frames: Int, backfilled: Int)? {
        var log: (frames: Int, backfilled: Int)?
        // One row: busy (0 or 1), frames in the log, frames moved into the database.
        _ = try connection.run(Statement("PRAGMA wal_checkpoint(PASSIVE)")) { row in
            if let frames = try row.integer(1), let backfilled = try row.integer(2) { log = (frames, backfilled) }
        }
        return log
    }

    /// Rows the direct connection and the readers stepped over in full table scans so far, and
    /// how often they compiled a cached statement again.
    func statementCosts() async throws -> (fullScanSteps: Int, reprepares: Int) {
        let connection = database.connection
        let written = try await thread.loop.submit { (connection.fullScanSteps, connection.reprepares) }.get()
        let read = readers.statementCosts
        return (written.0 + read.fullScanSteps, written.1 + read.reprepares)
    }

    /// How many write groups the direct connection has committed.
    func commitCount() async throws -> Int {
        let connection = database.connection
        return try await thread.loop.submit { connection.commits }.get()
    }

    func shutdownAsync(_ application: Application) async {
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

/// Units of work next to the database (the second step of a sign-in).
struct UnitsOfWork: Sendable {
    /// Twofold's own SQLite connection; `nil` for any other database, where a unit simply runs.
    let direct: DirectSQLite?

    /// Runs `body` where database statements cost no thread hop: on the direct SQLite
    /// connection's thread when there is one. For a path that sends many statements in a row
    /// (the second step of a sign-in writes seven times). Under load it first waits for the
    /// connection's commit window (`DirectSQLiteConnection.admission()`), to share a commit with
    /// the units arriving meanwhile. Answers only once its writes are committed, also when it
    /// throws (a wrong code's recorded failure must stand before the client hears of it).
    /// `eventLoop` (the request's) is where the rest of the request resumes afterwards.
    func run<T: Sendable>(on eventLoop: any EventLoop, _ body: () async throws -> T) async throws -> T {
        guard let sqlite = direct else { return try await body() }
        let connection = sqlite.database.connection
        let result = try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            try await sqlite.thread.run {
                if let window = try await sqlite.thread.perform({ connection.admission() }) {
                    try await window.get()
                }
                let unit = WriteGroups()
                let result: Result<T, any Error>
                do {
                    result = .success(try await WriteGroups.$current.withValue(unit) { try await body() })
                } catch {
                    result = .failure(error)
                }
                let groups = unit.groups
                // The units queued behind this one run, and share its commit, while it waits here.
                try await sqlite.thread.perform { connection.settled(groups) }.get()
                return result
            }
        }
        return try result.get()
    }
}
