import Foundation
import Logging

/// Work a request starts and does not wait for: what an anonymous caller must not be able to
/// time (issue V item 6: `POST /auth/request-otp` looked an account up and sent its code on the
/// request path, ~1.2 ms longer for an account with an SMS sign-in device, which told a stranger
/// who has one). Failures are logged; `idle()` waits until none is under way (tests, shutdown).
actor BackgroundWork {
    private var running: [UUID: Task<Void, Never>] = [:]

    /// Starts `work`; its error, if any, is logged as `what` under `logger`.
    nonisolated func start(_ what: String, logger: Logger, _ work: @escaping @Sendable () async throws -> Void) {
        Task { await self.run(what, logger: logger, work) }
    }

    private func run(_ what: String, logger: Logger, _ work: @escaping @Sendable () async throws -> Void) {
        let id = UUID()
        running[id] = Task {
            do {
                try await work()
            } catch {
                logger.warning("\(what) failed: \(String(reflecting: type(of: error)))")
            }
            self.finished(id)
        }
    }

    private func finished(_ id: UUID) { running[id] = nil }

    /// Returns once no work is under way (work started meanwhile included).
    func idle() async {
        while let (_, task) = running.first {
            await task.value
        }
    }
}
