import Foundation

/// Waiting for work that others share (one refresh for every caller that needs it): a cancelled
/// waiter stops waiting at once with `CancellationError`, and the work goes on for the others.
enum CancellableWait {
    /// `task`'s value; `CancellationError` as soon as the calling task is cancelled.
    static func value<Value: Sendable>(of task: Task<Value, Never>) async throws -> Value {
        let waiter = Waiter<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.start(continuation)
                Task { waiter.finish(.success(await task.value)) }
            }
        } onCancel: {
            waiter.finish(.failure(CancellationError()))
        }
    }

    /// Resumes its continuation once, with whichever outcome came first: the value, or the
    /// cancellation (which may come before the continuation exists).
    private final class Waiter<Value: Sendable>: @unchecked Sendable {
        // Safe: every field is read and written under `lock`.
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Value, any Error>?
        private var early: Result<Value, any Error>?
        private var resumed = false

        func start(_ continuation: CheckedContinuation<Value, any Error>) {
            lock.lock()
            if let early {
                resumed = true
                lock.unlock()
                continuation.resume(with: early)
                return
            }
            self.continuation = continuation
            lock.unlock()
        }

        func finish(_ outcome: Result<Value, any Error>) {
            lock.lock()
            guard !resumed else { return lock.unlock() }
            guard let continuation else {
                if early == nil { early = outcome }
                return lock.unlock()
            }
            resumed = true
            self.continuation = nil
            lock.unlock()
            continuation.resume(with: outcome)
        }
    }
}
