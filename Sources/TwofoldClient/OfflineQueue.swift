import Foundation
import TwofoldAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A change made while the server could not be reached, kept until it can: its endpoint (method
/// and path template, and the value of its parameter), its JSON body, and the `Idempotency-Key`
/// made for it when it was made, so however often it is sent, the server applies it once.
public struct QueuedChange: Codable, Sendable, Equatable, Identifiable {
    /// The change's identifier: the key of its outcome in `OfflineQueue.replay()`.
    public var id: UUID
    /// The endpoint's HTTP method.
    public var method: HTTPVerb
    /// The endpoint's path template (`API`'s), looked up again when the change is sent.
    public var template: String
    /// The value of the path's parameter, for a resource endpoint.
    public var value: String?
    /// The JSON body, `nil` for an endpoint that takes none.
    public var body: Data?
    /// The `Idempotency-Key` sent with every send of this change.
    public var idempotencyKey: String
    /// When the change was made, by this device's clock, to the second (as it is kept in a file).
    public var madeAt: Date
    /// Whose change it is: sent only on that user's session, never on another's who signs in
    /// on the same device.
    public var userID: UUID

    /// A change as `OfflineQueue.enqueue` makes one (a test's or a preview's fixture).
    public init(
        id: UUID, method: HTTPVerb, template: String, value: String?, body: Data?, idempotencyKey: String,
        madeAt: Date, userID: UUID
    ) {
        (self.id, self.method, self.template, self.value, self.body) = (id, method, template, value, body)
        (self.idempotencyKey, self.madeAt, self.userID) = (idempotencyKey, madeAt, userID)
    }
}

/// A change whose body holds a secret (a password, a code, a token), which the queue does not
/// keep: it would wait in a file, and a code would be stale when sent.
public struct SecretNotQueued: Error, Sendable, Equatable, LocalizedError {
    /// The endpoint the change was for.
    public let endpoint: String
    /// The change for `endpoint` was not queued.
    public init(endpoint: String) { self.endpoint = endpoint }
    public var errorDescription: String? {
        Words.text("queue.secretNotQueued", "This change needs a connection: it can't wait until you're back online.")
    }
}

extension QueuedChange {
    /// The endpoint of `API` the change was queued for, by its method and path template; `nil`
    /// for one an older client queued that this one no longer knows.
    var endpoint: AnyEndpoint? { API.all.first { $0.method == method && $0.template == template } }

    /// The change in a person's words, for the list of what waits to be sent ("Rename a
    /// passkey"); a change this list has no words for is "A change to your account".
    public var summary: String {
        endpoint.flatMap { Self.summaries[$0] } ?? Words.text("queue.change", "A change to your account")
    }

    /// What each change the app can make offline does, by its endpoint.
    static let summaries: [AnyEndpoint: String] = [
        API.TwoFactor.totpSetup.erased: Words.text("queue.totpSetup", "Start setting up an authenticator app"),
        API.TwoFactor.primaryMethod.erased: Words.text("queue.primaryMethod", "Change how you sign in first"),
        API.TwoFactor.revokeTrustedDevice.erased: Words.text("queue.forgetDevice", "Forget a remembered device"),
        API.Passkeys.rename.erased: Words.text("queue.renamePasskey", "Rename a passkey"),
        API.Passkeys.delete.erased: Words.text("queue.removePasskey", "Remove a passkey"),
        API.Auth.revokeSession.erased: Words.text("queue.signOutSession", "Sign out another session"),
        API.Auth.logoutAll.erased: Words.text("queue.signOutEverywhere", "Sign out everywhere"),
        API.Push.forgetPushToken.erased: Words.text("queue.forgetPushToken", "Stop notifications on this phone"),
    ]
}

extension QueuedChange: CustomStringConvertible, CustomDebugStringConvertible {
    /// The change without its body, which a log has no need of.
    public var description: String {
        "QueuedChange(\(method.rawValue) /\(template)\(value.map { " [\($0)]" } ?? ""), "
            + "body: \(body?.count ?? 0) bytes, key: \(idempotencyKey), madeAt: \(madeAt))"
    }
    public var debugDescription: String { description }
}

/// Where queued changes are kept between launches.
public protocol ChangeQueueStore: Sendable {
    /// The changes kept, oldest first.
    func load() async throws -> [QueuedChange]
    /// Keeps `changes` in place of those kept before.
    func save(_ changes: [QueuedChange]) async throws
}

/// Queued changes in memory (tests).
public actor MemoryChangeQueueStore: ChangeQueueStore {
    /// The changes kept now, oldest first.
    public private(set) var changes: [QueuedChange] = []
    /// A store that starts with `changes`.
    public init(_ changes: [QueuedChange] = []) { self.changes = changes }
    /// The changes kept.
    public func load() -> [QueuedChange] { changes }
    /// Keeps `changes` in place of those kept before.
    public func save(_ changes: [QueuedChange]) { self.changes = changes }
}

/// Queued changes in a file only the device's user may read (0600, written whole and renamed
/// over the old one, never through a link), beside the token store: changes made offline
/// survive the app being closed. A file others may read is refused (`PrivateFile.NotPrivate`),
/// not trusted: its changes would be sent with this user's tokens.
public struct FileChangeQueueStore: ChangeQueueStore {
    private let file: PrivateFile

    /// The queue kept in `file` (nothing is read or written yet).
    public init(file: URL) { self.file = PrivateFile(file) }

    /// The changes kept, oldest first; none when there is no file yet.
    public func load() throws -> [QueuedChange] {
        guard let data = try file.read() else { return [] }
        return try Wire.decoder().decode([QueuedChange].self, from: data)
    }

    /// Keeps `changes` in place of those kept before.
    public func save(_ changes: [QueuedChange]) throws {
        try file.write(try Wire.encoder().encode(changes))
    }
}

/// What happened to a queued change when it was sent.
public enum ChangeOutcome: Sendable, Equatable {
    /// The server applied it (or had, on an earlier send whose answer was lost: `replayed`).
    case applied(status: Int, replayed: Bool)
    /// The server refused it for good (a rule, a conflict): it is dropped, with the server's code.
    case refused(status: Int, code: ErrorCode?)
}

/// Changes made while offline (seed 003), replayed in order once the server answers again. Each
/// change carries an `Idempotency-Key` made when it was queued, so a change whose answer was
/// lost — sent, applied, and the answer never arrived — is answered again from the server's
/// record instead of being applied twice. Replays run one at a time, in the order the changes
/// were made, with a fresh access token from the `SessionManager`; a replay that meets the
/// network down again stops and keeps the rest.
public actor OfflineQueue {
    private let session: SessionManager
    private let store: any ChangeQueueStore
    private var changes: [QueuedChange]?
    private var replaying: Task<[UUID: ChangeOutcome], any Error>?

    /// A queue that sends with `session`'s tokens and keeps its changes in `store`.
    public init(session: SessionManager, store: any ChangeQueueStore) {
        (self.session, self.store) = (session, store)
    }

    /// The changes waiting, oldest first.
    public var waiting: [QueuedChange] {
        get async throws { try await loaded() }
    }

    private func loaded() async throws -> [QueuedChange] {
        if let changes { return changes }
        let stored = try await store.load()
        changes = stored
        return stored
    }

    /// Queues `body` for `endpoint` (a change: not `GET`).
    @discardableResult
    public func enqueue<Body: Encodable, Answer>(
        _ endpoint: Endpoint<Body, Answer>, _ body: Body, now: Date = Date()
    ) async throws -> QueuedChange {
        try await enqueue(endpoint.erased, value: nil, body: body, now: now)
    }

    /// Queues `body` for `endpoint` on the resource `value`.
    @discardableResult
    public func enqueue<Body: Encodable, Answer>(
        _ endpoint: ResourceEndpoint<Body, Answer>, _ value: String, _ body: Body, now: Date = Date()
    ) async throws -> QueuedChange {
        try await enqueue(endpoint.erased, value: value, body: body, now: now)
    }

    private func enqueue(
        _ endpoint: AnyEndpoint, value: String?, body: some Encodable, now: Date
    ) async throws -> QueuedChange {
        precondition(endpoint.method != .get, "only changes are queued")
        // A password, a code or a token would wait in a file, and a code would be stale by the
        // time it is sent: such a change is made online or not at all.
        if body is any RedactedDescription { throw SecretNotQueued(endpoint: endpoint.description) }
        guard let user = await session.user else { throw SessionError.signedOut }
        let change = QueuedChange(
            id: UUID(), method: endpoint.method, template: endpoint.template, value: value,
            body: body is NoContent ? nil : try Wire.encoder().encode(body),
            idempotencyKey: "twofold-" + UUID().uuidString.lowercased(),
            madeAt: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)), userID: user.id)
        var all = try await loaded()
        all.append(change)
        try await store.save(all)
        changes = all
        return change
    }

    /// Sends the signed-in user's waiting changes in order (another user's wait for theirs);
    /// what became of each one sent. Stops at the first
    /// that meets the network down (or a `5xx`, or `429`), keeping it and those after it.
    /// Concurrent calls share one replay.
    @discardableResult
    public func replay() async throws -> [UUID: ChangeOutcome] {
        if let replaying { return try await replaying.value }
        let task = Task { try await self.sendAll() }
        replaying = task
        defer { replaying = nil }
        return try await task.value
    }

    private func sendAll() async throws -> [UUID: ChangeOutcome] {
        var outcomes: [UUID: ChangeOutcome] = [:]
        guard let user = await session.user else { throw SessionError.signedOut }
        while let change = try await loaded().first(where: { $0.userID == user.id }) {
            guard let outcome = try await send(change) else { break }
            outcomes[change.id] = outcome
            var rest = try await loaded()
            rest.removeAll { $0.id == change.id }
            try await store.save(rest)
            changes = rest
        }
        return outcomes
    }

    /// One change sent; `nil` when it is to be kept for later.
    private func send(_ change: QueuedChange) async throws -> ChangeOutcome? {
        // A change queued by an older client for an endpoint this one no longer knows.
        guard let endpoint = change.endpoint else { return .refused(status: 404, code: .notFound) }
        for attempt in 0..<2 {
            let token = try await session.accessToken()
            let answer: HTTPAnswer
            do {
                answer = try await session.client.exchange(
                    endpoint, change.value, body: change.body, bearer: token,
                    headers: [Wire.Header.idempotencyKey: change.idempotencyKey])
            } catch {
                return nil
            }
            switch answer.status {
            case 200..<300:
                return .applied(
                    status: answer.status, replayed: answer.header(Wire.Header.idempotentReplayed) == "true")
            case 401 where attempt == 0:
                // The access token was refused: refresh it once and send again, same key.
                try await session.refresh()
                continue
            case 408, 429, 500...:
                return nil
            case 409 where APIClient.refusal(answer).retryAfter != nil:
                // The same change, sent by another replay, is still being answered.
                return nil
            default:
                return .refused(status: answer.status, code: APIClient.refusal(answer).code)
            }
        }
        return nil
    }
}
