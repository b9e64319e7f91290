import NIOCore
import NIOPosix

/// The one thread that owns Twofold's own SQLite connection (`DirectSQLiteConnection`), also
/// usable as a Swift task executor.
///
/// Statements reach the connection without a thread hop when the calling task already runs here:
/// `run(_:)` moves a whole unit of work (the second step of a sign-in, say) onto this thread, so
/// its statements cost one hop in and one out instead of two hops each.
///
/// `afterEachJob` runs after every Swift job here: the connection queues the commit of its open
/// write group there, so no group stays open once the thread's queue is empty. Set and read only on the thread (which
/// makes the `@unchecked Sendable` safe).
package final class SQLiteThread: TaskExecutor, @unchecked Sendable {
    private let group: MultiThreadedEventLoopGroup
    package let loop: any EventLoop
    package var afterEachJob: () -> Void = {}

    package init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    package var isCurrent: Bool { loop.inEventLoop }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
            self.afterEachJob()
        }
    }

    /// Runs `body` with this thread as the task's preferred executor: its nonisolated async code,
    /// and so every statement it sends to the direct connection, runs here without hopping.
    package func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withTaskExecutorPreference(self) { try await body() }
    }

    /// `work` on this thread: at once when the caller already runs here, else queued to it.
    package func perform<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        isCurrent ? work() : try await loop.submit(work).get()
    }

    package func shutdown() async throws {
        try await group.shutdownGracefully()
    }
}

/// An event loop as a task's preferred executor. `UnitsOfWork.run` comes back through
/// it to the request's own loop: otherwise the writer thread, which is not one of the loops,
/// would hand the rest of the request to any loop, and its answer would hop once more to the
/// loop its connection belongs to.
package final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    package let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
