import Fluent
import Foundation
import NIOCore
import Vapor

/// Background work run every `interval` while the application is up (housekeeping, delivery).
/// Failures are logged and the next run tries again. Shutting down waits for a run in progress,
/// and a run never starts once the databases are gone.
struct RepeatingJob: LifecycleHandler {
    let name: String
    let interval: TimeAmount
    let work: @Sendable (Application, any Database) async throws -> Void

    func didBoot(_ application: Application) throws {
        let eventLoop = application.eventLoopGroup.next()
        let task = eventLoop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { [name, work] _ in
            eventLoop.makeFutureWithTask {
                guard let database = application.databases.database(logger: application.logger, on: eventLoop) else {
                    return
                }
                do {
                    try await work(application, database)
                } catch {
                    application.logger.warning("\(name) failed", metadata: ["error": "\(error)"])
                }
            }
        }
        var tasks = application.storage[Tasks.self] ?? [:]
        tasks[name] = task
        application.storage[Tasks.self] = tasks
    }

    func shutdownAsync(_ application: Application) async {
        guard let task = application.storage[Tasks.self]?[name] else { return }
        let stopped = application.eventLoopGroup.next().makePromise(of: Void.self)
        task.cancel(promise: stopped)
        try? await stopped.futureResult.get()
    }

    struct Tasks: StorageKey {
        typealias Value = [String: RepeatedTask]
    }
}
