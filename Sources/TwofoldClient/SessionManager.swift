import Foundation
import TwofoldAPI

/// What an app's auth guard shows (seed 003): `checking` until the stored session has been
/// read, then `signedIn` or `signedOut`. Never `signedOut` before the check is done, so a
/// signed-in user never sees the sign-in screen flash.
public enum AuthState: Sendable, Equatable {
    case checking
    case signedIn(UserDTO)
    case signedOut
    /// A session may be stored, but the store cannot be read yet (a phone not unlocked since it
    /// started): not signed out; `restore()` again once it can be.
    case waitingForStore
}

/// Why the session manager could not give a token.
public enum SessionError: Error, Sendable, Equatable {
    /// There is no session: never signed in, signed out, or ended by the server.
    case signedOut
    /// The server could not be reached (no network, a timeout, a cancel, a `5xx`): the session
    /// is kept, and the next call tries again.
    case offline(String)
    /// The store cannot be read yet (`TokenStoreNotReadableYet`).
    case storeNotReadableYet
}

/// Keeps one signed-in session: restores it from its store without a request, hands out an
/// access token that is valid for a while yet, refreshes it ahead of expiry with one request
/// however many callers need it at once, and signs out. Each write checks that the session is
/// still the one it started from, so a refresh that finishes after a newer sign-in or a
/// sign-out changes nothing.
///
/// The bugs the field reports most in SDKs like this one are each a test here: parallel
/// refreshes (Auth0.swift #429, supabase-swift #707), a refresh that loses the network signing
/// the user out (Amplify #3337), and a late refresh bringing back a signed-out session
/// (supabase-swift #1371).
public actor SessionManager {
    public nonisolated let client: APIClient
    private let store: any TokenStore
    private let now: @Sendable () -> Date
    /// How long before its expiry an access token is refreshed.
    public nonisolated let refreshAhead: TimeInterval

    private var current: StoredSession?
    /// The refresh in flight, by the refresh token it presents.
    private var refreshing: (from: String, task: Task<RefreshOutcome, Never>)?
    private var watchers: [UUID: AsyncStream<AuthState>.Continuation] = [:]

    /// What the guard shows now.
    public private(set) var state: AuthState = .checking
    /// Whether the last refresh could not reach the server.
    public private(set) var isOffline = false

    public init(
        client: APIClient, store: any TokenStore, refreshAhead: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        (self.client, self.store, self.refreshAhead, self.now) = (client, store, refreshAhead, now)
    }

    /// The signed-in user, if any.
    public var user: UserDTO? { current?.user }

    /// The session as stored now (for a test or the command-line tool's `status`).
    public var session: StoredSession? { current }

    // MARK: The guard

    /// Reads the stored session and decides locally, from its expiry, with no request: signed in
    /// while its refresh token is valid (an expired access token is refreshed when next needed),
    /// signed out otherwise.
    @discardableResult
    public func restore() async -> AuthState {
        do {
            let stored = try await store.load()
            if let stored, stored.refreshToken.expiresAt > now() {
                current = stored
                update(.signedIn(stored.user))
            } else {
                current = nil
                if stored != nil { try? await store.clear() }
                update(.signedOut)
            }
        } catch is TokenStoreNotReadableYet {
            update(.waitingForStore)
        } catch {
            // A store that cannot be decoded holds no session this client can use.
            current = nil
            update(.signedOut)
        }
        return state
    }

    /// The state now, then each change, until the stream is dropped.
    public func states() -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.self, bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        watchers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unwatch(id) }
        }
        return stream
    }

    private func unwatch(_ id: UUID) { watchers[id] = nil }

    private func update(_ new: AuthState) {
        guard new != state else { return }
        state = new
        for watcher in watchers.values { watcher.yield(new) }
    }

    // MARK: Signing in and out

    /// Keeps the tokens a sign-in flow ended with (a new sign-in: it replaces any session).
    public func signedIn(_ tokens: AuthTokensResponse) async throws {
        try await start(StoredSession(tokens))
    }

    /// Keeps the tokens a second step ended with.
    public func signedIn(_ answer: SecondStepResponse) async throws {
        try await start(
            StoredSession(accessToken: answer.accessToken, refreshToken: answer.refreshToken, user: answer.user))
    }

    private func start(_ session: StoredSession) async throws {
        current = session
        isOffline = false
        update(.signedIn(session.user))
        do { try await store.save(session) } catch is TokenStoreNotReadableYet {
            throw SessionError.storeNotReadableYet
        }
    }

    /// Signs out here at once (the store cleared), then ends the session on the server; a server
    /// that cannot be reached lets the session lapse by itself.
    public func signOut() async {
        let ended = current
        current = nil
        refreshing = nil
        try? await store.clear()
        update(.signedOut)
        if let ended { await Self.revoke(ended.refreshToken.token, with: client) }
    }

    // MARK: Tokens

    /// An access token valid for at least `refreshAhead` more seconds, refreshed first if need be.
    public func accessToken() async throws -> String {
        guard let session = current else { throw SessionError.signedOut }
        if session.accessToken.expiresAt.timeIntervalSince(now()) > refreshAhead { return session.accessToken.token }
        return try await refresh(from: session).accessToken.token
    }

    /// Refreshes now, whatever the access token's expiry (after the server answered `401` to it).
    @discardableResult
    public func refresh() async throws -> StoredSession {
        guard let session = current else { throw SessionError.signedOut }
        return try await refresh(from: session)
    }

    private enum RefreshOutcome: Sendable {
        case refreshed(RefreshResponse)
        /// The server refused the refresh token: the session is over.
        case refused
        case unreachable(String)
    }

    private func refresh(from session: StoredSession) async throws -> StoredSession {
        let presented = session.refreshToken.token
        let task: Task<RefreshOutcome, Never>
        if let inFlight = refreshing, inFlight.from == presented {
            task = inFlight.task
        } else {
            task = Task { [client] in await Self.exchange(presented, with: client) }
            refreshing = (presented, task)
        }
        let outcome = await task.value
        if refreshing?.from == presented { refreshing = nil }

        let stillCurrent = current?.signIn == session.signIn
        switch outcome {
        case .refreshed(let pair):
            guard stillCurrent, let current else {
                // Signed out or signed in again meanwhile: these tokens belong to no one now.
                await Self.revoke(pair.refreshToken.token, with: client)
                throw SessionError.signedOut
            }
            // Another caller of the same refresh has stored it already.
            guard current.refreshToken.token == presented else { return current }
            var next = current
            next.accessToken = pair.accessToken
            next.refreshToken = pair.refreshToken
            self.current = next
            isOffline = false
            // A store that cannot be written now (a locked phone) keeps the old pair; this one
            // lives in memory until the app ends.
            try? await store.save(next)
            return next
        case .refused:
            if stillCurrent {
                current = nil
                try? await store.clear()
                update(.signedOut)
            }
            throw SessionError.signedOut
        case .unreachable(let reason):
            if stillCurrent { isOffline = true }
            throw SessionError.offline(reason)
        }
    }

    /// One refresh request, its outcome as a value.
    private static func exchange(_ refreshToken: String, with client: APIClient) async -> RefreshOutcome {
        do {
            return .refreshed(try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: refreshToken)))
        } catch let error as APIError where error.status == 401 || error.status == 400 || error.status == 422 {
            return .refused
        } catch let error as APIError {
            return .unreachable("the server answered \(error.status)")
        } catch is CancellationError {
            return .unreachable("cancelled")
        } catch {
            return .unreachable("\(error)")
        }
    }

    /// Ends the session of `refreshToken` on the server, if it can be reached.
    private static func revoke(_ refreshToken: String, with client: APIClient) async {
        _ = try? await client.send(API.Auth.logout, RefreshRequest(refreshToken: refreshToken))
    }
}
