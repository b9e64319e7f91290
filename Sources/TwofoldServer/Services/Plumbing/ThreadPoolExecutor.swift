import NIOPosix

/// A task executor whose jobs run on a thread pool rather than on the event loops, which serve
/// as Swift's global executor here (`twofold-server/main.swift`). Work that a stranger can make
/// expensive — a passkey ceremony's signature and certificate checks — runs under it
/// (`withTaskExecutorPreference`), so the event loops keep answering meanwhile, as they do while
/// bcrypt runs on the same pool (issue T).
final class ThreadPoolExecutor: TaskExecutor, Sendable {
    let pool: NIOThreadPool

    init(pool: NIOThreadPool) { self.pool = pool }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        // A job runs even when the pool is shutting down (the work item is then marked
        // cancelled): its task must be able to finish.
        pool.submit { _ in job.runSynchronously(on: executor) }
    }
}
