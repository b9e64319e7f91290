import Foundation

/// The requests that wait for an approval request to change (a signing-in screen's status call,
/// a phone's list): each is a suspended task holding a continuation, never a thread or a
/// database connection, so one server holds thousands (issue Z item 5). A decision made here
/// wakes its waiters at once; one made on another instance reaches them through
/// `PushApprovals.watchOtherInstances`, a single query a second for all of them.
actor PushWaiters {
    /// What a waiter waits for: one request, or any new request of an account (a phone's list).
    enum Key: Hashable, Sendable {
        case request(UUID)
        case account(UUID)
    }

    private var waiting: [Key: [UUID: CheckedContinuation<Void, Never>]] = [:]
    private var timeouts: [UUID: Task<Void, Never>] = [:]

    /// How many waiters are suspended now.
    var count: Int { waiting.values.reduce(0) { $0 + $1.count } }

    /// Whether anyone waits now.
    var isEmpty: Bool { waiting.isEmpty }

    /// Suspends until `key` is signalled or `seconds` pass (real time: a long poll's length is
    /// the client's, whatever the server's clock says), whichever comes first.
    func wait(for key: Key, seconds: Double) async {
        guard seconds > 0 else { return }
        let token = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiting[key, default: [:]][token] = continuation
            timeouts[token] = Task { [weak self] in
                try? await Task.sleep(for: .seconds(seconds))
                await self?.resume(token, of: key)
            }
        }
    }

    /// Wakes every waiter of `key`.
    func signal(_ key: Key) {
        guard let waiters = waiting.removeValue(forKey: key) else { return }
        for (token, continuation) in waiters {
            timeouts.removeValue(forKey: token)?.cancel()
            continuation.resume()
        }
    }

    private func resume(_ token: UUID, of key: Key) {
        timeouts.removeValue(forKey: token)
        guard let continuation = waiting[key]?.removeValue(forKey: token) else { return }
        if waiting[key]?.isEmpty == true { waiting.removeValue(forKey: key) }
        continuation.resume()
    }
}
