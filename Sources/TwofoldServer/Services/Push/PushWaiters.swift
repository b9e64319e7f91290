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
    /// How many signals were given: a waiter takes it before reading what it waits on, and does
    /// not wait when a signal came between (one it would otherwise miss).
    private(set) var generation = 0

    /// How many waiters are suspended now.
    var count: Int { waiting.values.reduce(0) { $0 + $1.count } }

    /// Whether anyone waits now.
    var isEmpty: Bool { waiting.isEmpty }

    /// How many may wait for one key at once: a page, an app and a retry or two. More are
    /// answered at once (a flow's holder cannot park unbounded work on the server).
    static let perKey = 8

    /// What `wait` did.
    enum Outcome: Sendable, Equatable {
        /// Woken by a signal, or the time passed, or a signal came since `generation` was read:
        /// read again.
        case waited
        /// `perKey` already wait for the key: answer with what is known now.
        case busy
    }

    /// Suspends until `key` is signalled or `seconds` pass (real time: a long poll's length is
    /// the client's, whatever the server's clock says), whichever comes first. Returns at once
    /// when a signal was given since `seen` (the `generation` read before the caller read the
    /// state it waits on), or when `perKey` already wait for `key` (`.busy`).
    func wait(for key: Key, seconds: Double, since seen: Int) async -> Outcome {
        guard (waiting[key]?.count ?? 0) < Self.perKey else { return .busy }
        guard seconds > 0, generation == seen else { return .waited }
        let token = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiting[key, default: [:]][token] = continuation
            timeouts[token] = Task { [weak self] in
                try? await Task.sleep(for: .seconds(seconds))
                await self?.resume(token, of: key)
            }
        }
        return .waited
    }

    /// Wakes every waiter of `key`.
    func signal(_ key: Key) {
        generation &+= 1
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
