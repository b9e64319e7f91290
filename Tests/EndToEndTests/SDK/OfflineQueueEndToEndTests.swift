import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's offline queue against the built server, on SQLite and PostgreSQL: a change whose
/// answer was lost is sent again with its `Idempotency-Key` and applied once; parallel replays
/// of one key apply it once.
@Suite struct OfflineQueueEndToEndTests {
    /// The real transport, except that the first answer to `path` is lost after the server
    /// gave it (the network dropped on the way back); every answer to `path` is recorded.
    final class LosingTransport: Transport, @unchecked Sendable {
        // Safe: every member is read and written under `lock`.
        private let lock = NSLock()
        private let real = URLSessionTransport()
        private let path: String
        private var lost = false
        private var seen: [HTTPAnswer] = []

        init(losingFirstAnswerTo path: String) { self.path = path }

        var answers: [HTTPAnswer] { lock.withLock { seen } }

        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            let answer = try await real.send(request)
            guard request.url?.path.hasSuffix(path) == true else { return answer }
            let lose = lock.withLock {
                seen.append(answer)
                defer { lost = true }
                return !lost
            }
            if lose { throw URLError(.networkConnectionLost) }
            return answer
        }
    }

    /// A suffix that keeps a test's accounts apart from other runs' on a shared PostgreSQL.
    static func suffix() -> String { String(UInt32.random(in: 0...UInt32.max), radix: 36) }

    /// Registers `name` (password only) and signs it in on `session`.
    static func signIn(_ name: String, on session: SessionManager, register: Bool = true) async throws {
        if register {
            _ = try await session.client.send(
                API.Auth.register,
                RegisterRequest(username: name, email: "\(name)@example.com", password: TestAccounts.password))
        }
        await session.signedIn(
            try await session.client.send(
                API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
            ).tokens)
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aChangeWhoseAnswerWasLostIsAppliedOnce(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-queue")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        let transport = LosingTransport(losingFirstAnswerTo: API.TwoFactor.totpSetup.path())
        let client = APIClient(baseURL: server.baseURL, transport: transport)
        let session = SessionManager(client: client, store: MemoryTokenStore())
        try await Self.signIn("ola-\(Self.suffix())", on: session)
        let file = root.appendingPathComponent("state/queue.json")
        let queue = OfflineQueue(session: session, store: FileChangeQueueStore(file: file))

        // Starting an authenticator app's setup: the server makes a secret; its answer is lost.
        let change = try await queue.enqueue(API.TwoFactor.totpSetup, NoContent())
        #expect(try await queue.replay().isEmpty, "the lost answer keeps the change")
        #expect(try await queue.waiting == [change])
        #expect(await session.isOffline == false, "a lost answer is no refresh failure")
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the queue is the owner's alone")

        // The app is closed and opened again: a new queue reads the change from the file and
        // sends it again, with the same key. The server answers from its record of the first,
        // and makes no new secret.
        let relaunched = OfflineQueue(session: session, store: FileChangeQueueStore(file: file))
        #expect(try await relaunched.waiting == [change])
        let outcomes = try await relaunched.replay()
        #expect(outcomes[change.id] == .applied(status: 200, replayed: true))
        let stored = try FileChangeQueueStore(file: file).load()
        #expect(try await relaunched.waiting.isEmpty && stored.isEmpty)
        let answers = transport.answers
        #expect(answers.count == 2, "the server saw the change twice")
        let first = try Wire.decoder().decode(TOTPSetupResponse.self, from: answers[0].body)
        let second = try Wire.decoder().decode(TOTPSetupResponse.self, from: answers[1].body)
        #expect(first.secret == second.secret)
        // The one secret pending is the first one: its code confirms it.
        let code = try TOTP(secret: try Base32.decode(first.secret)).code(at: Date())
        let enabled = try await client.send(
            API.TwoFactor.totpVerify, CodeRequest(code: code), bearer: try await session.accessToken())
        #expect(enabled.backupCodes?.count == 10)
    }

    @Test(arguments: ["sqlite", "postgres"])
    func twentyParallelReplaysOfOneKeyApplyItOnce(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-queue-parallel")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        let session = SessionManager(client: server.client, store: MemoryTokenStore())
        try await Self.signIn("pia-\(Self.suffix())", on: session)
        let change = try await OfflineQueue(session: session, store: MemoryChangeQueueStore())
            .enqueue(API.TwoFactor.totpSetup, NoContent())

        // Twenty queues holding the same change (a state folder copied, say), replayed at once,
        // each until it has an outcome.
        let outcomes = try await withThrowingTaskGroup(of: ChangeOutcome?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let queue = OfflineQueue(session: session, store: MemoryChangeQueueStore([change]))
                    for _ in 0..<50 {
                        if let outcome = try await queue.replay()[change.id] { return outcome }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    return nil
                }
            }
            return try await group.reduce(into: [ChangeOutcome?]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .applied(status: 200, replayed: false) }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == .applied(status: 200, replayed: true) }.count == 19, "\(outcomes)")
    }

    /// A change belongs to the user who made it: another user signing in on the device does not
    /// send it on their session.
    @Test func anotherUsersSessionDoesNotSendTheChange() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-queue-user")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let session = SessionManager(client: server.client, store: MemoryTokenStore())
        try await Self.signIn("una", on: session)
        let store = MemoryChangeQueueStore()
        let change = try await OfflineQueue(session: session, store: store).enqueue(
            API.TwoFactor.totpSetup, NoContent())
        await session.signOut()
        try await Self.signIn("vic", on: session)
        let queue = OfflineQueue(session: session, store: store)
        #expect(try await queue.replay().isEmpty)
        #expect(try await queue.waiting == [change], "una's change waits for una")
    }
}
