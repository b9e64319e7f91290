import Foundation
import NIOCore
import VaporCSQLite

/// Twofold's own connection to the SQLite file, beside Fluent's (which only migrates): the
/// stores' statements run on it synchronously, prepared once and kept, on the one thread that owns it
/// (`SQLiteThread`).
///
/// **Group commit.** A commit costs far more than a statement (on the development machine
/// ~170 µs against ~10 µs), and a sign-in writes six times. So the first writing statement opens
/// a transaction (`BEGIN IMMEDIATE`, a "write group"), and the group is committed once the work
/// already queued on the thread has run (`commitSoon`, at the end of every job): the units of
/// work that run meanwhile share one commit. A unit (`UnitsOfWork.run`) answers only
/// after the commit of every group it wrote in (`settled`), and fails if one was rolled back.
/// The group is committed after each statement sent from another thread. Each statement
/// stays atomic (SQLite undoes a failed statement, not the transaction). The write lock is held
/// only while this thread is busy; other connections (Fluent's, another server process) wait
/// for it through the busy timeout.
///
/// **Commit window.** A commit's cost follows the pages it writes, and most of a sign-in's
/// pages (the ends of the session, token and audit tables and their indexes) are the same for
/// every sign-in. Under steady load units of work arrive a little apart, so without a pause
/// each would commit alone: on the development machine, 2,500 sign-ins/s made 2,500 commits of
/// ~12 pages each, and the writer spent ~190 µs per sign-in. So while the database is busy (it
/// committed in the last `busyWithin`), a unit waits for the window the first waiting unit
/// opened (`commitWindow` long) to end, before it writes: the units that waited then run back
/// to back and share one commit, and the write lock is not held while they wait. A unit after
/// a quiet spell runs at once.
///
/// Confined: every method must be called on `thread` (checked), which is what makes the
/// `@unchecked Sendable` safe.
package final class DirectSQLiteConnection: @unchecked Sendable {
    package typealias Cursor = SQLiteHandle.Cursor

    package let thread: SQLiteThread
    private let handle: SQLiteHandle

    private let groupsWrites: Bool
    /// The open write group, numbered.
    private var openGroup: UInt64?
    private var nextGroup: UInt64 = 1
    /// Units of work waiting for the open group's commit, and whether that commit is queued.
    private var waitingForCommit: [EventLoopPromise<Void>] = []
    private var commitQueued = false
    /// The end of the open commit window, once it opens; and when the last commit was.
    private var window: EventLoopFuture<Void>?
    private var lastCommit: NIODeadline?
    /// How long a commit window stays open, and how recent a commit must be for the next unit
    /// of work to wait for one. Set on `thread` (tests widen both).
    package var commitWindow = TimeAmount.milliseconds(3)
    package var busyWithin = TimeAmount.milliseconds(10)
    /// Write groups committed so far (read by tests and operators: one per sign-in, not seven).
    private(set) var commits = 0
    /// Groups that were rolled back, with why (the last few hundred: a unit of work checks its
    /// groups within moments of writing).
    private var rolledBack: [UInt64: DirectSQLiteError] = [:]

    /// Rows stepped over in full table scans, and recompilations of kept statements, so far
    /// (read by tests).
    package var fullScanSteps: Int { handle.fullScanSteps }
    package var reprepares: Int { handle.reprepares }

    /// Opens `path` on `thread` with the same settings as Fluent's connections (`SQLiteTuning`).
    /// `groupsWrites: false` gives plain autocommit statements (the checkpointer's connection).
    package static func open(path: String, thread: SQLiteThread, groupsWrites: Bool = true) async throws
        -> DirectSQLiteConnection
    {
        try await thread.loop.submit {
            let handle = try SQLiteHandle(path: path)
            // Checkpoints (which wait for the disk) run on the checkpointer's connection and
            // thread, not between sign-ins on this one (`DirectSQLite`).
            if groupsWrites {
                do { try handle.execute("PRAGMA wal_autocheckpoint = 0") } catch {
                    handle.close()
                    throw error
                }
            }
            return DirectSQLiteConnection(thread: thread, handle: handle, groupsWrites: groupsWrites)
        }.get()
    }

    private init(thread: SQLiteThread, handle: SQLiteHandle, groupsWrites: Bool) {
        self.thread = thread
        self.handle = handle
        self.groupsWrites = groupsWrites
    }

    /// Runs a typed statement, reading each row through a `Cursor` (no values are copied
    /// until asked for). Returns the write group the statement wrote in (left open: see
    /// `commit()`), or `nil` for a statement that only reads. Must be called on `thread`.
    package func run(_ statement: Statement, onRow: (Cursor) throws -> Void) throws -> UInt64? {
        try inGroup { willWrite in try handle.run(statement, willWrite: willWrite, onRow: onRow) }
    }

    /// Runs a typed statement that writes (an INSERT, UPDATE or DELETE), answering the write
    /// group it wrote in and how many rows it changed: SQLite counts them itself, so a claim
    /// needs no `RETURNING` clause (whose rows SQLite buffers in a temporary table that every run
    /// builds and frees). A statement that only reads changes nothing (0).
    package func changes(_ statement: Statement) throws -> (group: UInt64?, changes: Int) {
        var writes = false
        let group = try inGroup { willWrite in
            try handle.run(
                statement,
                willWrite: {
                    writes = true
                    try willWrite()
                }, onRow: { _ in })
        }
        return (group, writes ? handle.changes : 0)
    }

    /// Runs a statement (`body`, given what to call before it writes) in the open write group,
    /// opening one when it writes; returns that group.
    private func inGroup(_ body: (_ willWrite: () throws -> Void) throws -> Void) throws -> UInt64? {
        precondition(thread.isCurrent, "the direct SQLite connection is used off its thread")
        var group: UInt64?
        do {
            try body { if groupsWrites { group = try joinGroup() } }
            return group
        } catch let error as DirectSQLiteError {
            // Most failures undo the statement alone; some (I/O, a full disk) end the whole
            // transaction, and with it every write of the open group.
            if let openGroup, handle.isAutocommit {
                endGroup(openGroup, failure: error)
            }
            throw error
        }
    }

    /// Commits the open write group, if any, and answers the units waiting for it. Throws if it
    /// could not be committed (it is rolled back then). Call on `thread`.
    package func commit() throws {
        precondition(thread.isCurrent, "the direct SQLite connection is used off its thread")
        guard let group = openGroup else { return }
        do {
            try handle.execute("COMMIT")
            openGroup = nil
            lastCommit = .now()
            commits += 1
            wakeWaiters(failure: nil)
        } catch let error as DirectSQLiteError {
            if !handle.isAutocommit { try? handle.execute("ROLLBACK") }
            endGroup(group, failure: error)
            throw error
        }
    }

    /// Commits the open write group once the work already waiting on the thread has run, so
    /// the units of work in that queue share the commit. Called when a job on the thread ends.
    package func commitSoon() {
        guard openGroup != nil, !commitQueued else { return }
        commitQueued = true
        thread.loop.execute {
            self.commitQueued = false
            try? self.commit()
        }
    }

    /// When a unit of work that is about to write may start: `nil` for at once (the database was
    /// quiet), otherwise the end of the open commit window, which the units arriving meanwhile
    /// share. Call on `thread`.
    package func admission() -> EventLoopFuture<Void>? {
        precondition(thread.isCurrent, "the direct SQLite connection is used off its thread")
        if let window { return window }
        // A connection that does not group its writes never commits a group: never busy.
        guard let lastCommit, NIODeadline.now() < lastCommit + busyWithin else { return nil }
        // Fails (cancelled) only if the thread stops first, and the waiting units with it.
        let ends = thread.loop.scheduleTask(in: commitWindow) { self.window = nil }.futureResult
        window = ends
        return ends
    }

    /// Completes once every write group in `groups` is committed; fails if one was rolled back.
    /// Call on `thread`.
    package func settled(_ groups: [UInt64]) -> EventLoopFuture<Void> {
        precondition(thread.isCurrent, "the direct SQLite connection is used off its thread")
        var waits = false
        for group in groups {
            if let failure = rolledBack[group] { return thread.loop.makeFailedFuture(failure) }
            if group == openGroup { waits = true }
        }
        guard waits else { return thread.loop.makeSucceededFuture(()) }
        let promise = thread.loop.makePromise(of: Void.self)
        waitingForCommit.append(promise)
        commitSoon()
        return promise.futureResult
    }

    package func close() {
        precondition(thread.isCurrent, "the direct SQLite connection is used off its thread")
        try? commit()
        handle.close()
    }

    /// The open write group, or a new one.
    private func joinGroup() throws -> UInt64 {
        if let openGroup { return openGroup }
        try handle.execute("BEGIN IMMEDIATE")
        let group = nextGroup
        nextGroup += 1
        openGroup = group
        return group
    }

    private func wakeWaiters(failure: DirectSQLiteError?) {
        let waiting = waitingForCommit
        waitingForCommit = []
        for promise in waiting {
            if let failure { promise.fail(failure) } else { promise.succeed(()) }
        }
    }

    private func endGroup(_ group: UInt64, failure: DirectSQLiteError) {
        openGroup = nil
        wakeWaiters(failure: failure)
        rolledBack[group] = failure
        rolledBack = rolledBack.filter { $0.key + 512 > group }
    }
}
