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

    /// How many may wait for one key at once: a page, an app and a retry or two. More are
    /// answered at once (a flow's holder cannot park unbounded work on the server).
    static let perKey = 8

    /// Suspends until `key` is signalled or `seconds` pass (real time: a long poll's length is
    /// the client's, whatever the server's clock says), whichever comes first; `false` when it
    /// did not wait (no time, or `perKey` already wait for `key`).
    @discardableResult
    func wait(for key: Key, seconds: Double) async -> Bool {
        guard seconds > 0, (waiting[key]?.count ?? 0) < Self.perKey else { return false }
        let token = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiting[key, default: [:]][token] = continuation
            timeouts[token] = Task { [weak self] in
                try? await Task.sleep(for: .seconds(seconds))
                await self?.resume(token, of: key)
            }
        }
        return true
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
