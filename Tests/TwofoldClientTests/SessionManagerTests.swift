import Foundation
import Testing
import TwofoldAPI
import TwofoldClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `SessionManager` against a scripted server: the refresh bugs SDKs are known for, each as a
/// test (one refresh for many callers, a lost network keeping the session, a refused refresh
/// signing out, a late refresh changing nothing), and restoring with no request.
@Suite struct SessionManagerTests {
    /// Answers refresh and logout requests as told, counting them; a refresh waits for `release`
    /// when `held` is set, so a test can act while one is in flight.
    final class Server: Transport, @unchecked Sendable {
        enum Refresh { case rotate, refuse, unreachable, serverError, proxyLogin }
        // Safe: every member is read and written under `lock`.
        private let lock = NSLock()
        private var refreshes: [String] = []
        private var logouts: [String] = []
        private var others = 0
        private var answer = Refresh.rotate
        private var gate: CheckedContinuation<Void, Never>?
        private var holding = false
        private var arrived: [CheckedContinuation<Void, Never>] = []

        var refreshCount: Int { lock.withLock { refreshes.count } }
        var revoked: [String] { lock.withLock { logouts } }
        var requestCount: Int { lock.withLock { refreshes.count + logouts.count + others } }

        func answer(_ refresh: Refresh) { lock.withLock { answer = refresh } }
        func hold() { lock.withLock { holding = true } }

        /// Waits until a held refresh has arrived.
        func refreshArrived() async {
            await withCheckedContinuation { continuation in
                let now = lock.withLock {
                    if gate != nil { return true }
                    arrived.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func release() {
            let waiting = lock.withLock {
                holding = false
                defer { gate = nil }
                return gate
            }
            waiting?.resume()
        }

        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            let path = request.url?.path ?? ""
            let body = (try? JSONSerialization.jsonObject(with: request.httpBody ?? Data()) as? [String: String]) ?? [:]
            if path.hasSuffix(API.Auth.logout.path()) {
                lock.withLock { logouts.append(body["refreshToken"] ?? "") }
                return Self.json(200, #"{"success":true}"#)
            }
            guard path.hasSuffix(API.Auth.refresh.path()) else {
                lock.withLock { others += 1 }
                return Self.json(404, "{}")
            }
            let (presented, count, held) = lock.withLock {
                refreshes.append(body["refreshToken"] ?? "")
                return (body["refreshToken"] ?? "", refreshes.count, holding)
            }
            if held {
                await withCheckedContinuation { continuation in
                    let waiters = lock.withLock {
                        gate = continuation
                        defer { arrived = [] }
                        return arrived
                    }
                    for waiter in waiters { waiter.resume() }
                }
            }
            switch lock.withLock({ answer }) {
            case .rotate:
                let access = ISO8601DateFormatter().string(from: Date().addingTimeInterval(900))
                let refresh = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
                return Self.json(
                    200,
                    #"{"accessToken":{"token":"access-\#(count)","expiresAt":"\#(access)"},"#
                        + #""refreshToken":{"token":"refresh-\#(count)-from-\#(presented)","expiresAt":"\#(refresh)"}}"#
                )
            case .refuse:
                return HTTPAnswer(
                    status: 401, headers: ["Content-Type": "application/problem+json"],
                    body: Data(
                        #"{"type":"about:blank","title":"Unauthorized","status":401,"code":"unauthorized"}"#.utf8))
            case .unreachable:
                throw URLError(.notConnectedToInternet)
            case .serverError:
                return Self.json(503, "{}")
            case .proxyLogin:
                // A captive portal's answer: 401, but not the server's problem document.
                return HTTPAnswer(
                    status: 401, headers: ["Content-Type": "text/html"], body: Data("<h1>Sign in to Wi-Fi</h1>".utf8))
            }
        }

        static func json(_ status: Int, _ text: String) -> HTTPAnswer {
            HTTPAnswer(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
        }
    }

    static let user = UserDTO(
        id: UUID(), username: "pat", email: "pat@example.com", phoneNumber: nil, role: "user", status: "active",
        createdAt: Date(timeIntervalSince1970: 1_800_000_000))

    /// A stored session whose access token expires in `accessSeconds`.
    static func stored(accessSeconds: TimeInterval, refreshSeconds: TimeInterval = 86_400) -> StoredSession {
        StoredSession(
            accessToken: TokenDTO(token: "access-0", expiresAt: Date().addingTimeInterval(accessSeconds)),
            refreshToken: TokenDTO(token: "refresh-0", expiresAt: Date().addingTimeInterval(refreshSeconds)),
            user: user, server: "http://twofold.test")
    }

    static func manager(_ server: Server, _ store: any TokenStore) -> SessionManager {
        SessionManager(client: APIClient(baseURL: URL(string: "http://twofold.test")!, transport: server), store: store)
    }

    /// A store whose `clear()` waits until the test opens it: a sign-out still on its way.
    actor SlowClearStore: TokenStore {
        private var session: StoredSession?
        private var gate: CheckedContinuation<Void, Never>?
        private var arrived: CheckedContinuation<Void, Never>?
        private var clearing = false
        init(_ session: StoredSession) { self.session = session }
        func load() -> StoredSession? { session }
        func save(_ session: StoredSession) { self.session = session }
        func clear() async {
            clearing = true
            arrived?.resume()
            arrived = nil
            await withCheckedContinuation { gate = $0 }
            session = nil
        }
        func clearStarted() async {
            if clearing { return }
            await withCheckedContinuation { arrived = $0 }
        }
        func open() {
            gate?.resume()
            gate = nil
        }
    }

    /// A restore while a sign-out is clearing the store does not bring the session back: it reads
    /// the store after the clear.
    @Test func aRestoreDuringASignOutDoesNotBringTheSessionBack() async throws {
        let store = SlowClearStore(Self.stored(accessSeconds: 900))
        let manager = Self.manager(Server(), store)
        #expect(await manager.restore() == .signedIn(Self.user))
        let signingOut = Task { await manager.signOut() }
        await store.clearStarted()
        let restoring = Task { await manager.restore() }
        try await Task.sleep(for: .milliseconds(50))
        await store.open()
        await signingOut.value
        #expect(await restoring.value == .signedOut)
        #expect(manager.currentState == .signedOut)
    }

    /// The caller that started a refresh goes away (its view closed) while the server rotates
    /// the pair: the new pair is kept all the same. Dropping it would leave the spent refresh
    /// token to present next time, which the server takes for a stolen one.
    @Test func aRefreshWhoseCallerWasCancelledIsKept() async throws {
        let server = Server()
        let store = MemoryTokenStore(Self.stored(accessSeconds: -10))
        let manager = Self.manager(server, store)
        _ = await manager.restore()
        server.hold()
        let call = Task { try await manager.accessToken() }
        await server.refreshArrived()
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(await manager.isOffline == false)
        server.release()
        // The next call waits for that same refresh, or finds its pair kept: no second refresh.
        #expect(try await manager.accessToken() == "access-1")
        #expect(server.refreshCount == 1)
        #expect(try await store.load()?.refreshToken.token == "refresh-1-from-refresh-0")
    }

    @Test func restoringAStoredSessionDecidesLocallyWithNoRequest() async throws {
        let server = Server()
        let manager = Self.manager(server, MemoryTokenStore(Self.stored(accessSeconds: -10)))
        #expect(await manager.state == .checking, "nothing is decided before the store is read")
        #expect(manager.currentState == .checking && manager.currentUser == nil, "read without await")
        #expect(await manager.restore() == .signedIn(Self.user), "an expired access token is refreshed later")
        #expect(manager.currentState == .signedIn(Self.user) && manager.currentUser == Self.user)
        #expect(server.requestCount == 0)

        let expired = Self.manager(server, MemoryTokenStore(Self.stored(accessSeconds: -10, refreshSeconds: -1)))
        #expect(await expired.restore() == .signedOut)
        #expect(await Self.manager(server, MemoryTokenStore()).restore() == .signedOut)
        #expect(server.requestCount == 0)

        // A token not due is handed out locally, however often it is asked for (its speed is
        // a benchmark's to measure, not a test's on a loaded machine).
        for _ in 0..<1_000 { _ = try await manager.accessToken() }
        #expect(server.refreshCount == 1, "only the first call refreshed")
        await manager.signOut()
        #expect(manager.currentState == .signedOut && manager.currentUser == nil)
    }

    @Test func aStoreNotReadableYetIsNotSignedOut() async throws {
        let store = MemoryTokenStore(Self.stored(accessSeconds: 600))
        await store.setReadable(false)
        let manager = Self.manager(Server(), store)
        #expect(await manager.restore() == .waitingForStore)
        await store.setReadable(true)
        #expect(await manager.restore() == .signedIn(Self.user))
    }

    @Test func fiftyCallersWithAnExpiredTokenMakeOneRefresh() async throws {
        let server = Server()
        let store = MemoryTokenStore(Self.stored(accessSeconds: -10))
        let manager = Self.manager(server, store)
        await manager.restore()
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await manager.accessToken() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(server.refreshCount == 1)
        #expect(Set(tokens) == ["access-1"])
        #expect(await store.session?.refreshToken.token == "refresh-1-from-refresh-0", "the new pair is stored")
        // A valid token makes no request.
        #expect(try await manager.accessToken() == "access-1")
        #expect(server.refreshCount == 1)
    }

    /// Two runs of the command-line tool share one session file: while one refreshes, the other
    /// waits for the file's lock and takes the pair it stored, never presenting the spent
    /// refresh token (which the server would take for a stolen one).
    @Test func twoProcessesSharingASessionFileRefreshOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("session.json")
        try FileTokenStore(file: file).save(Self.stored(accessSeconds: -10))
        let server = Server()
        // Each manager with a store of its own on the one file, as two processes have.
        let first = Self.manager(server, FileTokenStore(file: file))
        let second = Self.manager(server, FileTokenStore(file: file))
        await first.restore()
        await second.restore()
        server.hold()
        let firstToken = Task { try await first.accessToken() }
        await server.refreshArrived()
        let secondToken = Task { try await second.accessToken() }
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.refreshCount == 1, "the second waits for the first's refresh")
        server.release()
        #expect(try await firstToken.value == "access-1")
        #expect(try await secondToken.value == "access-1")
        #expect(server.refreshCount == 1)
        #expect(try FileTokenStore(file: file).load()?.refreshToken.token == "refresh-1-from-refresh-0")
        // And the next refresh of either presents the new refresh token.
        _ = try await second.refresh()
        #expect(server.refreshCount == 2)
        #expect(try FileTokenStore(file: file).load()?.refreshToken.token == "refresh-2-from-refresh-1-from-refresh-0")
        let lock = try #require(try? FileManager.default.attributesOfItem(atPath: file.path + ".lock"))
        #expect((lock[.posixPermissions] as? Int) == 0o600)
    }

    /// A session kept for another server is never used (its tokens are never sent to this one)
    /// and is left in the store.
    @Test func aSessionOfAnotherServerIsNotUsed() async throws {
        var stored = Self.stored(accessSeconds: 600)
        stored.server = "http://other.test"
        let store = MemoryTokenStore(stored)
        let server = Server()
        let manager = Self.manager(server, store)
        #expect(await manager.restore() == .signedOut)
        await #expect(throws: SessionError.signedOut) { _ = try await manager.accessToken() }
        #expect(server.requestCount == 0)
        #expect(await store.session == stored, "left for the other server")
        // A session signed in here is filed under this server.
        await manager.signedIn(
            AuthTokensResponse(
                accessToken: TokenDTO(token: "a", expiresAt: Date().addingTimeInterval(600)),
                refreshToken: TokenDTO(token: "r", expiresAt: Date().addingTimeInterval(86_400)), user: Self.user))
        #expect(await store.session?.server == "http://twofold.test")
        // The other server's session, gone from the store, was ended at its own server.
        #expect(server.revoked == [stored.refreshToken.token])
    }

    /// A session kept by a version that did not record its server belongs to no server it can
    /// be proven to: it is not used (sign in again), and a sign-out here leaves it.
    @Test func aSessionWithoutItsServerIsNotUsed() async throws {
        var legacy = Self.stored(accessSeconds: 600)
        legacy.server = nil
        let store = MemoryTokenStore(legacy)
        let server = Server()
        let manager = Self.manager(server, store)
        #expect(await manager.restore() == .signedOut)
        #expect(await manager.otherServersSession == legacy)
        await manager.signOut()
        #expect(await store.session == legacy && server.requestCount == 0)
    }

    /// Another process signed in anew while this one waited for the file's lock: this one's
    /// older session ends here (its token revoked) instead of being written over the newer one.
    @Test func aRefreshSupersededByAnotherProcesssSignInChangesNothingThere() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = FileTokenStore(file: folder.appendingPathComponent("session.json"))
        try file.save(Self.stored(accessSeconds: -10))
        let server = Server()
        let older = Self.manager(server, FileTokenStore(file: file.file))
        await older.restore()
        // Another run of the tool signs in anew: a new sign-in, written to the file.
        let newer = StoredSession(
            accessToken: TokenDTO(token: "access-new", expiresAt: Date().addingTimeInterval(900)),
            refreshToken: TokenDTO(token: "refresh-new", expiresAt: Date().addingTimeInterval(86_400)), user: Self.user,
            server: "http://twofold.test")
        try file.save(newer)
        await #expect(throws: SessionError.signedOut) { _ = try await older.accessToken() }
        #expect(await older.state == .signedOut)
        #expect(server.refreshCount == 0, "the spent session was not refreshed")
        #expect(server.revoked == ["refresh-0"], "the older session ended on the server")
        let kept = try file.load()
        #expect(kept?.signIn == newer.signIn && kept?.refreshToken.token == "refresh-new", "the newer sign-in stays")
    }

    @Test func aRefreshThatCannotReachTheServerKeepsTheSession() async throws {
        for failure in [Server.Refresh.unreachable, .serverError, .proxyLogin] {
            let server = Server()
            server.answer(failure)
            let store = MemoryTokenStore(Self.stored(accessSeconds: -10))
            let manager = Self.manager(server, store)
            await manager.restore()
            await #expect(throws: SessionError.self) { _ = try await manager.accessToken() }
            #expect(await manager.state == .signedIn(Self.user))
            #expect(await manager.isOffline)
            #expect(await store.session?.refreshToken.token == "refresh-0", "the session stays stored")
            // Back online, the same refresh token works.
            server.answer(.rotate)
            #expect(try await manager.accessToken() == "access-2")
            #expect(await manager.isOffline == false)
        }
    }

    @Test func aRefusedRefreshSignsOutAndClearsTheStore() async throws {
        let server = Server()
        server.answer(.refuse)
        let store = MemoryTokenStore(Self.stored(accessSeconds: -10))
        let manager = Self.manager(server, store)
        var states = await manager.states().makeAsyncIterator()
        #expect(await states.next() == .checking)
        await manager.restore()
        #expect(await states.next() == .signedIn(Self.user))
        await #expect(throws: SessionError.signedOut) { _ = try await manager.accessToken() }
        #expect(await states.next() == .signedOut)
        #expect(await store.session == nil)
    }

    /// A restored session whose access token is due, and a refresh of it held at the server:
    /// the test acts while it is in flight, then releases it.
    static func lateRefresh() async -> (Server, MemoryTokenStore, SessionManager, Task<String, any Error>) {
        let server = Server()
        server.hold()
        let store = MemoryTokenStore(Self.stored(accessSeconds: -10))
        let manager = Self.manager(server, store)
        await manager.restore()
        let late = Task { try await manager.accessToken() }
        await server.refreshArrived()
        return (server, store, manager, late)
    }

    @Test func aRefreshFinishingAfterSignOutChangesNothing() async throws {
        let (server, store, manager, late) = await Self.lateRefresh()
        await manager.signOut()
        server.release()
        await #expect(throws: SessionError.signedOut) { _ = try await late.value }
        #expect(await manager.state == .signedOut)
        #expect(await store.session == nil, "the late pair is not stored")
        #expect(await manager.session == nil)
        // The session signed out and the pair the late refresh made are both ended on the server.
        #expect(Set(server.revoked) == ["refresh-0", "refresh-1-from-refresh-0"])
    }

    @Test func aRefreshFinishingAfterANewerSignInChangesNothing() async throws {
        let (server, store, manager, late) = await Self.lateRefresh()
        let newer = AuthTokensResponse(
            accessToken: TokenDTO(token: "newer-access", expiresAt: Date().addingTimeInterval(900)),
            refreshToken: TokenDTO(token: "newer-refresh", expiresAt: Date().addingTimeInterval(86_400)),
            user: Self.user)
        await manager.signedIn(newer)
        server.release()
        await #expect(throws: SessionError.signedOut) { _ = try await late.value }
        #expect(await store.session?.refreshToken.token == "newer-refresh")
        #expect(try await manager.accessToken() == "newer-access")
        // The replaced session and the late pair are ended on the server; the newer one is kept.
        #expect(Set(server.revoked) == ["refresh-0", "refresh-1-from-refresh-0"])
    }

    /// A store that takes its time to write, as a file or the Keychain may.
    final class SlowStore: TokenStore, @unchecked Sendable {
        // Safe: `stored` is read and written under `lock`.
        private let lock = NSLock()
        private var stored: StoredSession?
        var session: StoredSession? { lock.withLock { stored } }

        func load() async throws -> StoredSession? { session }
        func save(_ session: StoredSession) async throws {
            try await Task.sleep(for: .milliseconds(50))
            lock.withLock { stored = session }
        }
        func clear() async throws { lock.withLock { stored = nil } }
    }

    /// A sign-out while the sign-in's save is still writing: the save lands first and the clear
    /// after it, so the session does not come back at the next launch.
    @Test func aSignOutDuringASaveStaysSignedOut() async throws {
        let store = SlowStore()
        let server = Server()
        let manager = Self.manager(server, store)
        let tokens = AuthTokensResponse(
            accessToken: TokenDTO(token: "access-0", expiresAt: Date().addingTimeInterval(900)),
            refreshToken: TokenDTO(token: "refresh-0", expiresAt: Date().addingTimeInterval(86_400)),
            user: Self.user)
        async let signingIn: Void = manager.signedIn(tokens)
        try await Task.sleep(for: .milliseconds(10))
        await manager.signOut()
        await signingIn
        #expect(store.session == nil)
        #expect(await Self.manager(server, store).restore() == .signedOut)
    }

    /// A one-minute token (`TWOFOLD_ACCESS_TOKEN_SECONDS=60`) is refreshed at half its life, not
    /// on every call.
    @Test func aShortLivedTokenIsNotDueAsSoonAsItArrives() async throws {
        let server = Server()
        let fresh = StoredSession(
            accessToken: TokenDTO(token: "access-0", expiresAt: Date().addingTimeInterval(60)),
            refreshToken: TokenDTO(token: "refresh-0", expiresAt: Date().addingTimeInterval(86_400)), user: Self.user,
            server: "http://twofold.test")
        #expect(abs(fresh.refreshAt.timeIntervalSinceNow - 30) < 2)
        let manager = Self.manager(server, MemoryTokenStore(fresh))
        await manager.restore()
        #expect(try await manager.accessToken() == "access-0")
        #expect(server.refreshCount == 0)
    }

    @Test func theFileStoreIsTheOwnersAlone() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twofold-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileTokenStore(file: folder.appendingPathComponent("state/session.json"))
        #expect(try await store.load() == nil)
        // Whole seconds, as the server's dates are (the wire's ISO-8601 form keeps no fraction).
        let whole = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let session = StoredSession(
            accessToken: TokenDTO(token: "access-0", expiresAt: whole.addingTimeInterval(600)),
            refreshToken: TokenDTO(token: "refresh-0", expiresAt: whole.addingTimeInterval(86_400)), user: Self.user)
        try await store.save(session)
        try await store.save(session)
        #expect(try await store.load() == session)
        let fileMode = try FileManager.default.attributesOfItem(atPath: store.file.path)[.posixPermissions] as? Int
        let folderMode =
            try FileManager.default.attributesOfItem(atPath: store.file.deletingLastPathComponent().path)[
                .posixPermissions] as? Int
        #expect(fileMode == 0o600 && folderMode == 0o700)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: store.file.deletingLastPathComponent().path) == [
                "session.json"
            ])
        try await store.clear()
        try await store.clear()
        #expect(try await store.load() == nil)

        // A file others may read is refused, not trusted; a folder that exists keeps its mode.
        try await store.save(session)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.file.path)
        await #expect(throws: TokenFileNotPrivate.self) { _ = try await store.load() }
        let shared = FileTokenStore(file: folder.appendingPathComponent("session.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        try await shared.save(session)
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int == 0o755)
        #expect(try await shared.load() == session)
        // A link in the file's place is not followed, even to a private file.
        let linked = FileTokenStore(file: folder.appendingPathComponent("linked.json"))
        try FileManager.default.createSymbolicLink(at: linked.file, withDestinationURL: shared.file)
        await #expect(throws: TokenFileNotPrivate.self) { _ = try await linked.load() }
    }
}
