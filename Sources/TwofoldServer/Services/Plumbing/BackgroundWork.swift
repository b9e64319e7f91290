import Foundation
import Logging

/// Work a request starts and does not wait for: what an anonymous caller must not be able to
/// time (issue V item 6: `POST /auth/request-otp` looked an account up and sent its code on the
/// request path, ~1.2 ms longer for an account with an SMS sign-in device, which told a stranger
/// who has one). The work runs one piece at a time, in the order it was started, so its effects
/// come in the order of the requests. At most `limit` pieces wait (what comes beyond is dropped,
/// logged once per flood), and after `close()` nothing new starts: a flood cannot grow the queue
/// without bound or keep a shutdown waiting.
/// Failures are logged; `idle()` waits until none is under way (tests, shutdown).
actor BackgroundWork {
    typealias Work = @Sendable () async throws -> Void

    let limit: Int
    private var queue: [(what: String, logger: Logger, work: Work)] = []
    private var worker: Task<Void, Never>?
    private var closed = false
    /// Whether a drop was logged since the queue last ran empty (one line per flood, not one
    /// per request).
    private var dropLogged = false

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    /// Queues `work` (the caller waits for that alone, the same short time whatever the work);
    /// its error, if any, is logged as `what` under `logger`.
    func start(_ what: String, logger: Logger, _ work: @escaping Work) {
        guard !closed else { return }
        guard queue.count < limit else {
            if !dropLogged {
                logger.warning("\(what) dropped: \(limit) pieces of background work are waiting")
                dropLogged = true
            }
            return
        }
        queue.append((what, logger, work))
        if worker == nil {
            worker = Task { await self.drain() }
        }
    }

    private func drain() async {
        while !queue.isEmpty {
            let next = queue.removeFirst()
            do {
                try await next.work()
            } catch {
                next.logger.warning("\(next.what) failed: \(String(reflecting: type(of: error)))")
            }
        }
        dropLogged = false
        worker = nil
    }

    /// Returns once no work is waiting or under way (work queued meanwhile included).
    func idle() async {
        while let worker {
            await worker.value
        }
    }

    /// Starts nothing more, and returns once the work under way is done (shutdown).
    func close() async {
        closed = true
        await idle()
    }
}
