import Foundation
import NIOCore
import Vapor

/// Background work run every `interval` while the application is up (housekeeping, delivery).
/// Failures are logged and the next run tries again.
struct RepeatingJob: LifecycleHandler {
    let name: String
    let interval: TimeAmount
    let work: @Sendable (Application) async throws -> Void

    func didBoot(_ application: Application) throws {
        let task = application.eventLoopGroup.next().scheduleRepeatedAsyncTask(
            initialDelay: interval, delay: interval
        ) { [name, work] _ in
            application.eventLoopGroup.next().makeFutureWithTask {
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

    func shutdown(_ application: Application) {
        application.storage[Tasks.self]?[name]?.cancel()
    }

    struct Tasks: StorageKey {
        typealias Value = [String: RepeatedTask]
    }
}
