import Foundation
import TwofoldAPI

/// What an app's auth guard shows (seed 003): `checking` until the stored session has been
/// read, then `signedIn` or `signedOut`. Never `signedOut` before the check is done, so a
/// signed-in user never sees the sign-in screen flash.
public enum AuthState: Sendable, Equatable {
    /// The stored session is being read: show neither screen yet.
    case checking
    /// Signed in as this user.
    case signedIn(UserDTO)
    /// No session: show the sign-in screen.
    case signedOut
    /// A session may be stored, but the store cannot be read yet (a phone not unlocked since it
    /// started): not signed out; `restore()` again once it can be.
    case waitingForStore
}

/// Why the session manager could not give a token. A caller that was cancelled gets
/// `CancellationError` instead, never one of these.
public enum SessionError: Error, Sendable, Equatable {
    /// There is no session: never signed in, signed out, or ended by the server.
    case signedOut
    /// The server could not be reached (no network, a timeout, a `5xx`, an answer that is not
    /// the server's): the session is kept, and the next call tries again. `Unreachable` keeps
    /// what went wrong, for a log.
    case offline(Unreachable)
    /// The server asks to wait so many seconds; the session is kept.
    case rateLimited(retryAfter: Int?)
}

/// What kept a refresh from reaching the server: a sentence for a log, and the error underneath
/// (a `URLError`, an `APIError` with a `5xx`, the token store's error) when there was one.
public struct Unreachable: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in words for a log (never a token).
    public let reason: String
    /// The error underneath, when there was one.
    public let underlying: (any Error & Sendable)?

    /// `reason`, with the error underneath when there is one.
    public init(_ reason: String, underlying: (any Error & Sendable)? = nil) {
        (self.reason, self.underlying) = (reason, underlying)
    }

    public var description: String { reason }

    /// Two are equal when they say the same: the errors underneath are not compared.
    public static func == (left: Unreachable, right: Unreachable) -> Bool { left.reason == right.reason }
}

/// Keeps one signed-in session: restores it from its store without a request, hands out an
/// access token that is not due for refresh, refreshes it with one request however many
/// callers need it at once, and signs out. Every write to the store runs after the one before
/// it, in the order the manager made them, and each refresh checks that the session is still
/// the one it started from: a refresh that finishes after a newer sign-in or a sign-out changes
/// nothing, and a sign-out is never undone by a write still on its way.
///
/// The bugs the field reports most in SDKs like this one are each a test here: parallel
/// refreshes (Auth0.swift #429, supabase-swift #707), a refresh that loses the network signing
/// the user out (Amplify #3337), and a late refresh bringing back a signed-out session
/// (supabase-swift #1371).
public actor SessionManager {
    /// The client for the server the session belongs to; refreshes and sign-outs go through it.
    public nonisolated let client: APIClient
    private let store: any TokenStore
    private let now: @Sendable () -> Date

    private var current: StoredSession?
    /// The refresh in flight, by the refresh token it presents.
    private var refreshing: (from: String, task: Task<Result<StoredSession, SessionError>, Never>)?
    /// The last write to the store; the next one waits for it.
    private var lastWrite: Task<Void, any Error>?
    /// A session kept in memory that the store has not taken yet (a phone locked at the time):
    /// written at the next chance, so the store never keeps a spent refresh token for long.
    private var unsaved = false
    /// A sign-out whose clearing of the store failed: retried at the next chance.
    private var uncleared = false
    /// Counts sign-ins and sign-outs: a restore that read the store across one is stale.
    private var signInsAndOuts = 0
    private let watchers = StateWatchers<AuthState>(buffer: 8, initial: .checking)

    /// What the guard shows now, read without `await`: from a SwiftUI view's body, or any
    /// thread. It is `state` as of its last change (`states()` tells each change).
    public nonisolated var currentState: AuthState { watchers.latest }

    /// Who is signed in now, read without `await`; `nil` when no one is (or not known yet).
    public nonisolated var currentUser: UserDTO? {
        if case .signedIn(let user) = watchers.latest { return user }
        return nil
    }

    /// What the guard shows now.
    public private(set) var state: AuthState = .checking
    /// Whether the last refresh could not reach the server.
    public private(set) var isOffline = false
    /// A session the store holds for another server (`StoredSession.server`), found by
    /// `restore()`: never used here; a new sign-in here ends it at its own server, a sign-out
    /// here leaves it.
    public private(set) var otherServersSession: StoredSession?

    /// A manager for `client`'s server that keeps the session in `store`; `now` is its clock.
    public init(client: APIClient, store: any TokenStore, now: @escaping @Sendable () -> Date = { Date() }) {
        (self.client, self.store, self.now) = (client, store, now)
    }

    /// The signed-in user, if any.
    public var user: UserDTO? { current?.user }

    /// The session as kept now (for a test or the command-line tool's `status`).
    public var session: StoredSession? { current }

    // MARK: The guard

    /// Reads the stored session and decides locally, from its expiry, with no request: signed in
    /// while its refresh token is valid (an expired access token is refreshed when next needed),
    /// signed out otherwise. A manager that already holds a session keeps it.
    @discardableResult
    public func restore() async -> AuthState {
        if current != nil { return state }
        if uncleared, (try? await write { try await $0.clear() }) != nil { uncleared = false }
        if uncleared {
            update(.signedOut)
            return state
        }
        // A sign-out's clearing of the store may still be on its way: read after it, and not at
        // all if a sign-out or sign-in happens while the store is read.
        _ = await lastWrite?.result
        let changes = signInsAndOuts
        do {
            let stored = try await store.load()
            // A sign-in or a sign-out while the store was read wins.
            if current != nil || signInsAndOuts != changes { return state }
            // A session of another server (or of a version that did not record its server) is
            // not this manager's: left where it is, unused, its tokens never sent here.
            if let stored, stored.server != client.origin {
                otherServersSession = stored
                update(.signedOut)
                return state
            }
            if let stored, stored.refreshToken.expiresAt > now() {
                current = stored
                update(.signedIn(stored.user))
            } else {
                if stored != nil { try? await write { try await $0.clear() } }
                update(.signedOut)
            }
        } catch is TokenStoreNotReadableYet {
            if current == nil { update(.waitingForStore) }
        } catch {
            // A store that cannot be read or decoded holds no session this client can use.
            if current == nil { update(.signedOut) }
        }
        return state
    }

    /// The state now, then each change, until the stream is dropped.
    public func states() -> AsyncStream<AuthState> { watchers.stream(starting: state) }

    private func update(_ new: AuthState) {
        guard new != state else { return }
        state = new
        watchers.yield(new)
    }

    // MARK: The store, one write at a time

    /// Runs `operation` on the store after every write asked for before it.
    private func write(_ operation: @escaping @Sendable (any TokenStore) async throws -> Void) async throws {
        let previous = lastWrite
        let task = Task { [store] in
            _ = await previous?.result
            // Another process's refresh reads and writes the same file under its lock: a
            // sign-in or sign-out here waits for it, and is not overwritten by it after.
            if store.isShared {
                try await store.exclusively { try await operation(store) }
            } else {
                try await operation(store)
            }
        }
        lastWrite = task
        try await task.value
    }

    /// Writes the session kept in memory, if the store has not taken it yet.
    private func saveUnsaved() async {
        guard unsaved, let session = current else { return }
        if (try? await write { try await $0.save(session) }) != nil, current == session { unsaved = false }
    }

    // MARK: Signing in and out

    /// Keeps the tokens a sign-in flow ended with: a new sign-in, which replaces any session
    /// (that one is ended on the server). The store takes it now, or at the next chance.
    public func signedIn(_ tokens: AuthTokensResponse) async {
        var session = StoredSession(tokens, receivedAt: now())
        session.server = client.origin
        await start(session)
    }

    /// Keeps the tokens a second step ended with.
    public func signedIn(_ answer: SecondStepResponse) async {
        var session = StoredSession(
            accessToken: answer.accessToken, refreshToken: answer.refreshToken, user: answer.user, receivedAt: now())
        session.server = client.origin
        await start(session)
    }

    private func start(_ session: StoredSession) async {
        let replaced = current
        current = session
        signInsAndOuts += 1
        refreshing = nil
        isOffline = false
        uncleared = false
        unsaved = true
        update(.signedIn(session.user))
        await saveUnsaved()
        if let replaced { await Self.revoke(replaced.refreshToken.token, with: client) }
        // The other server's session the store held is gone from it now: ended at its own
        // server (never sent here), when the store said which.
        if let other = otherServersSession {
            otherServersSession = nil
            if let server = other.server, let url = URL(string: server) {
                await Self.revoke(
                    other.refreshToken.token, with: APIClient(baseURL: url, transport: client.transport))
            }
        }
    }

    /// Signs out here at once (the store cleared, after any write on its way), then ends the
    /// session on the server; a server that cannot be reached lets the session lapse by itself.
    public func signOut() async {
        // Not signed in here, and the store holds another server's session: nothing of ours to
        // end, and theirs is left as it is.
        if current == nil, otherServersSession != nil {
            update(.signedOut)
            return
        }
        let ended = current
        current = nil
        signInsAndOuts += 1
        refreshing = nil
        unsaved = false
        update(.signedOut)
        uncleared = (try? await write { try await $0.clear() }) == nil
        if let ended { await Self.revoke(ended.refreshToken.token, with: client) }
    }

    /// Which sessions a sign-out ends.
    public enum SignOutScope: Sendable, Equatable {
        /// This device's session only (`signOut()`).
        case thisDevice
        /// Every other session of the account (other phones, browsers, the command-line tool);
        /// this one stays signed in.
        case otherDevices
        /// Every session of the account, this one included, and every remembered device.
        case everywhere
    }

    /// Ends the sessions `scope` names. `thisDevice` never fails (as `signOut()`); the others
    /// ask the server first and throw what it refused, the session here kept, and step the session
    /// up with `stepUp` when the server asks for it. `everywhere` then signs out here too.
    public func signOut(_ scope: SignOutScope, stepUp: (any StepUpProviding)? = nil) async throws {
        switch scope {
        case .thisDevice:
            await signOut()
        case .otherDevices:
            let others = try await authorized(stepUp: stepUp) { [client] token in
                try await client.send(API.Auth.sessions, bearer: token).sessions.filter { !$0.current }
            }
            for other in others {
                _ = try await authorized(stepUp: stepUp) { [client] token in
                    try await client.send(API.Auth.revokeSession, other.id.uuidString, bearer: token)
                }
            }
        case .everywhere:
            do {
                _ = try await authorized(stepUp: stepUp) { [client] token in
                    try await client.send(API.Auth.logoutAll, bearer: token)
                }
            } catch SessionError.signedOut {
                // Already ended at the server (a first try whose answer was lost): done.
            }
            await signOut()
        }
    }

    /// Keeps the access token a step-up answered (the same session, now proven more recently).
    public func steppedUp(_ accessToken: TokenDTO) async {
        guard var next = current else { return }
        next.accessToken = accessToken
        next.refreshAt = StoredSession.refreshTime(for: accessToken, receivedAt: now())
        current = next
        unsaved = true
        await saveUnsaved()
    }

    // MARK: Tokens

    /// An access token not yet due for refresh, refreshed first if it is.
    public func accessToken() async throws -> String {
        if unsaved { await saveUnsaved() }
        // Read after the wait: a refresh may have rotated the pair meanwhile.
        guard let session = current else { throw SessionError.signedOut }
        if now() < session.refreshAt { return session.accessToken.token }
        return try await refresh(from: session).accessToken.token
    }

    /// Refreshes now, whatever the access token's expiry (after the server answered `401` to it).
    @discardableResult
    public func refresh() async throws -> StoredSession {
        guard let session = current else { throw SessionError.signedOut }
        return try await refresh(from: session)
    }

    private enum RefreshOutcome: Sendable {
        /// A new pair; `stored` when it was written to a shared store under its lock.
        case refreshed(RefreshResponse, receivedAt: Date, stored: Bool = false)
        /// Another process sharing the store refreshed the same session first: its pair.
        case adopted(StoredSession)
        /// Another process sharing the store signed in anew or signed out meanwhile: this
        /// session is over here too (its token revoked, the store left to the other process).
        case superseded
        /// The server refused the refresh token: the session is over.
        case refused
        case rateLimited(Int?)
        case unreachable(Unreachable)
    }

    /// The refresh of `session`, shared by every caller that needs it. It runs, and its outcome
    /// is kept, even when every caller has been cancelled meanwhile: the server has spent the
    /// old refresh token by then, and losing the new pair would sign the person out at the
    /// next refresh. A cancelled caller stops waiting at once (`CancellationError`).
    private func refresh(from session: StoredSession) async throws -> StoredSession {
        let presented = session.refreshToken.token
        // The caller's session was read before an await, and a refresh finished meanwhile: its
        // pair is the answer. Presenting the spent token again would read as theft and end the
        // session everywhere.
        if let current, current.signIn == session.signIn, current.refreshToken.token != presented,
            refreshing?.from != presented
        {
            return current
        }
        let task: Task<Result<StoredSession, SessionError>, Never>
        if let inFlight = refreshing, inFlight.from == presented {
            task = inFlight.task
        } else {
            try Task.checkCancellation()
            task = Task { [client, store, now] in
                let outcome = await Self.refresh(session, with: client, store: store, now: now)
                return await self.settle(outcome, of: session)
            }
            refreshing = (presented, task)
        }
        return try await CancellableWait.value(of: task).get()
    }

    /// Keeps what a refresh of `session` brought; once per refresh, whoever still waits for it.
    private func settle(_ outcome: RefreshOutcome, of session: StoredSession) async -> Result<
        StoredSession, SessionError
    > {
        let presented = session.refreshToken.token
        if refreshing?.from == presented { refreshing = nil }
        do {
            return .success(try await apply(outcome, of: session))
        } catch let error as SessionError {
            return .failure(error)
        } catch {
            return .failure(.offline(Unreachable("\(error)", underlying: error)))
        }
    }

    private func apply(_ outcome: RefreshOutcome, of session: StoredSession) async throws -> StoredSession {
        let presented = session.refreshToken.token
        switch outcome {
        case .refreshed(let pair, let receivedAt, let stored):
            guard let current, current.signIn == session.signIn else {
                // Signed out or signed in again meanwhile: these tokens belong to no one now.
                await Self.revoke(pair.refreshToken.token, with: client)
                // A shared store took the pair under its lock: put back what this manager holds.
                if stored { await restoreStore(replacing: session.signIn) }
                throw SessionError.signedOut
            }
            // Another caller of the same refresh has kept it already.
            guard current.refreshToken.token == presented else { return current }
            let next = current.rotated(pair, receivedAt: receivedAt)
            self.current = next
            isOffline = false
            // Stored under the shared store's lock already: writing it again, after the lock was
            // let go, could put it back over another process's newer sign-in or sign-out.
            unsaved = !stored
            if unsaved { await saveUnsaved() }
            // Signed out while the store wrote: the sign-out's clear came after, and stands.
            guard self.current?.signIn == session.signIn else { throw SessionError.signedOut }
            return next
        case .superseded:
            await Self.revoke(presented, with: client)
            if current?.signIn == session.signIn {
                current = nil
                unsaved = false
                update(.signedOut)
            }
            throw SessionError.signedOut
        case .adopted(let stored):
            // Another process refreshed while this one waited for the store: its pair is ours.
            guard let current, current.signIn == session.signIn else { throw SessionError.signedOut }
            guard current.refreshToken.token == presented else { return current }
            self.current = stored
            isOffline = false
            return stored
        case .refused:
            if current?.signIn == session.signIn {
                current = nil
                unsaved = false
                update(.signedOut)
                uncleared = (try? await write { try await $0.clear() }) == nil
            }
            throw SessionError.signedOut
        case .rateLimited(let seconds):
            throw SessionError.rateLimited(retryAfter: seconds)
        case .unreachable(let reason):
            if current?.signIn == session.signIn { isOffline = true }
            throw SessionError.offline(reason)
        }
    }

    /// The refresh of `session`. With a store other processes share, it runs under the store's
    /// lock: a pair another process stored meanwhile is taken instead of presenting the spent
    /// token, and a new pair is stored before the lock is let go.
    private static func refresh(
        _ session: StoredSession, with client: APIClient, store: any TokenStore, now: @escaping @Sendable () -> Date
    ) async -> RefreshOutcome {
        guard store.isShared else { return await exchange(session.refreshToken.token, with: client, now: now) }
        do {
            return try await store.exclusively {
                let stored: StoredSession?
                do {
                    stored = try await store.load()
                } catch {
                    return .unreachable(Unreachable("the session store could not be read: \(error)", underlying: error))
                }
                // Signed out, or signed in anew, by another process while this one waited.
                guard let stored, stored.signIn == session.signIn else { return .superseded }
                if stored.refreshToken.token != session.refreshToken.token, stored.refreshAt >= session.refreshAt {
                    return .adopted(stored)
                }
                let outcome = await exchange(session.refreshToken.token, with: client, now: now)
                if case .refreshed(let pair, let receivedAt, _) = outcome,
                    (try? await store.save(session.rotated(pair, receivedAt: receivedAt))) != nil
                {
                    return .refreshed(pair, receivedAt: receivedAt, stored: true)
                }
                return outcome
            }
        } catch {
            return .unreachable(Unreachable("the session store: \(error)", underlying: error))
        }
    }

    /// After a refresh stored the pair of sign-in `replaced` under the lock and this manager
    /// moved on: writes the newer sign-in it holds, or, signed out, clears the store only if it
    /// still holds `replaced` (another process's sign-in there stands).
    private func restoreStore(replacing replaced: UUID) async {
        if current != nil {
            unsaved = true
            await saveUnsaved()
        } else {
            _ = try? await write { store in
                if (try? await store.load())?.signIn == replaced { try await store.clear() }
            }
        }
    }

    /// One refresh request, its outcome as a value. Only the server's own refusal (a problem
    /// document saying the token is not valid) ends the session; anything else, such as a
    /// proxy's login page answering `401`, is the network's trouble.
    private static func exchange(
        _ refreshToken: String, with client: APIClient, now: @Sendable () -> Date
    ) async -> RefreshOutcome {
        do {
            let pair = try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: refreshToken))
            return .refreshed(pair, receivedAt: now())
        } catch let error as APIError {
            switch error.code {
            case .unauthorized?, .expired?, .validationFailed?: return .refused
            case .rateLimited?: return .rateLimited(error.retryAfter)
            default: return .unreachable(Unreachable("the server answered \(error.status)", underlying: error))
            }
        } catch {
            return .unreachable(Unreachable("the server could not be reached: \(error)", underlying: error))
        }
    }

    /// Ends the session of `refreshToken` on the server, if it can be reached.
    private static func revoke(_ refreshToken: String, with client: APIClient) async {
        _ = try? await client.send(API.Auth.logout, RefreshRequest(refreshToken: refreshToken))
    }
}
