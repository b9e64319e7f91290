import Foundation
import NIOCore
import Vapor

/// Background work run every `interval` while the application is up (housekeeping, delivery).
/// Failures are logged and the next run tries again. Shutting down (before the databases close)
/// cancels the job and waits for a run in progress, so no run starts once they are gone.
struct RepeatingJob: LifecycleHandler {
    let name: String
    let interval: TimeAmount
    let work: @Sendable (Application) async throws -> Void

    func didBoot(_ application: Application) throws {
        let eventLoop = application.eventLoopGroup.next()
        let task = eventLoop.scheduleRepeatedAsyncTask(initialDelay: interval, delay: interval) { [name, work] _ in
            eventLoop.makeFutureWithTask {
                do {
                    try await work(application)
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
