import Foundation

/// The streams watching an actor's state (`SessionManager`, `SignInFlow`,
/// `DeviceSecondFactorFlow`): each gets the state at once, then every change, until it is
/// dropped. The actor yields from its own isolation, so the streams see the changes in order.
final class StateWatchers<State: Sendable>: @unchecked Sendable {
    // Safe: `continuations` is read and written only under `lock`.
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<State>.Continuation] = [:]
    private var last: State
    private let buffer: Int

    /// Each stream keeps the newest `buffer` states its reader has not taken yet; `initial` is
    /// the state before the first change.
    init(buffer: Int, initial: State) { (self.buffer, last) = (buffer, initial) }

    /// The state told last, read without waiting for the actor (a view's body reads it).
    var latest: State { lock.withLock { last } }

    /// A stream that starts with `state`.
    func stream(starting state: State) -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(buffer))
        let id = UUID()
        lock.withLock { continuations[id] = continuation }
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Tells every stream `state`.
    func yield(_ state: State) {
        let watching = lock.withLock {
            last = state
            return Array(continuations.values)
        }
        for continuation in watching { continuation.yield(state) }
    }
}
