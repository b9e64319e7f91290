import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldDevice

@testable import TwofoldServer

/// The second step as a service (`SecondStep`), with in-memory stores: no Vapor, no HTTP, no
/// database. Every method completes a flow once; a wrong code, a replayed code, a locked
/// factor, a locked account, an expired flow and parallel submissions are refused as the JSON
/// API refuses them, from the same code a sign-in page will call.
@Suite(.tags(.database)) struct SecondStepServiceTests {
    /// Messages the outbox delivered.
    final class Sent: MessageProvider, @unchecked Sendable {
        private let lock = NSLock()
        private var messages: [OutgoingMessage] = []
        var name: String { "test" }
        func deliver(_ message: OutgoingMessage) async throws { lock.withLock { messages.append(message) } }
        /// The six-digit code of the last message to `destination`.
        func code(to destination: String) -> String? {
            let body = lock.withLock { messages.last { $0.destination == destination }?.body } ?? ""
            return body.firstMatch(of: /\d{6}/).map { String($0.output) }
        }
    }

    /// A server's services on in-memory stores, with Alice and every second factor of hers.
    struct World {
        let clock = TestClock()
        let users = InMemoryUserStore()
        let flows = InMemoryLoginFlowStore()
        let totpStore = InMemoryTOTPCredentialStore()
        let sent = Sent()
        let context: TwofoldContext
        let pool: NIOThreadPool
        let alice: User
        let app: TOTP
        let backupCodes: [String]
        let deviceKey = SoftwareDeviceKey()
        var passkey = SoftwarePasskey(rpID: "localhost", origin: "http://localhost:8080", signCount: 1)
        static let phone = "+14155550123"

        var secondStep: SecondStep { context.secondStep }
        var loop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }

        init() async throws {
            let pool = NIOThreadPool(numberOfThreads: 1)
            pool.start()
            self.pool = pool
            await flows.link(totpStore)
            let secrets = SecretBox(key: SymmetricKey(size: .bits256))
            let outbox = InMemoryOutboxStore()
            let stores = TwofoldContext.Stores(
                audit: InMemoryAuditStore(), trustedDevices: InMemoryTrustedDeviceStore(),
                rateLimits: InMemoryRateLimitStore(), sessions: InMemorySessionStore(), users: users,
                guards: InMemoryFactorGuardStore(), loginFlows: flows, totp: totpStore,
                backupCodes: InMemoryBackupCodeStore(), outbox: outbox, oneTimeCodes: InMemoryOneTimeCodeStore(),
                devices: InMemoryDeviceStore(), passkeys: InMemoryPasskeyStore(),
                idempotency: InMemoryIdempotencyStore(), recovery: InMemoryRecoveryStore(),
                emailLinks: InMemoryEmailLinkStore(), pushApprovals: InMemoryPushApprovalStore(),
                phones: InMemoryPhoneChannelStore(), codeSignIns: nil,
                passkeySignIns: nil)
            let directory = FileManager.default.temporaryDirectory
            context = TwofoldContext(
                configuration: Configuration(dataDirectory: directory, database: .sqliteInMemory),
                clock: ServerClock { [clock] in clock.now },
                tokens: try await TokenService(current: P256.Signing.PrivateKey(), retired: []),
                passwords: try PasswordHasher(cost: 4, threadPool: pool), secrets: secrets,
                delivery: DeliveryWorker(store: outbox, sms: sent, email: sent, secrets: secrets), sqlite: nil,
                database: DatabaseExecutor(direct: nil, sql: { throw DatabaseExecutorError.notSQL }),
                stores: stores)

            // Alice, with a verified phone, SMS and email codes, an authenticator app, backup
            // codes, a device key and a passkey.
            alice = User(
                id: UUID(), username: "alice", email: "alice@example.com", phone: Self.phone, role: .user,
                passwordHash: try await context.passwords.hash("correct horse battery staple"), now: clock.now)
            #expect(try await users.insert(alice))
            await flows.addUser(alice.dto)
            try await users.setVerifiedPhone(Self.phone, userID: alice.id, now: clock.now, addedBy: nil)
            try await users.enableCodes(.sms, phone: Self.phone, userID: alice.id, now: clock.now, addedBy: nil)
            try await users.enableCodes(.email, phone: nil, userID: alice.id, now: clock.now, addedBy: nil)
            let setup = try await context.totp.setup(userID: alice.id, account: alice.email)
            app = try TOTP(secret: try Base32.decode(setup.secret))
            try await context.totp.confirm(try app.code(at: clock.now), userID: alice.id, origin: .none, addedBy: nil)
            clock.advance(by: 30)
            backupCodes = try await context.backupCodes.regenerate(for: alice.id, addedBy: nil)
            _ = try await context.deviceKeys.store.insert(
                DeviceRecord(
                    id: UUID(), userID: alice.id, deviceID: "iphone-1", method: .secureEnclave,
                    publicKey: deviceKey.publicKey, enrolledAt: clock.now, updatedAt: clock.now), addedBy: nil)
            let options = try await context.passkeys.creationOptions(for: alice, hints: nil)
            let registered = try await context.passkeys.register(
                passkey.registration(options), name: nil, user: alice, origin: .none, addedBy: nil)
            await users.setFactors(
                StoredFactors(
                    totp: try await context.totp.active(for: alice.id)?.id, passkeys: [registered.credentialID],
                    deviceKeys: ["iphone-1": deviceKey.publicKey], unusedBackupCodes: backupCodes.count),
                for: alice.id)
        }

        /// A login flow after Alice's password: its token.
        func flow() async throws -> String {
            try await context.loginFlows.start(user: alice, firstFactor: "pwd", origin: .none).0
        }

        func complete(_ attempt: SecondStep.Attempt) async throws -> SecondStep.SignedIn {
            try await secondStep.complete(attempt, origin: .none, on: loop)
        }

        /// The problem completing `attempt` throws; a failure if it signs in.
        func refusal(_ attempt: SecondStep.Attempt, sourceLocation: SourceLocation = #_sourceLocation) async
            -> Problem?
        {
            do {
                _ = try await complete(attempt)
                Issue.record("\(attempt.method) signed in", sourceLocation: sourceLocation)
            } catch let problem as Problem {
                return problem
            } catch {
                Issue.record("not a problem: \(error)", sourceLocation: sourceLocation)
            }
            return nil
        }

        /// The code the outbox delivers to `destination` for the flow `token`.
        func sentCode(_ method: FactorMethod, flow token: String, to destination: String) async throws -> String {
            _ = try await secondStep.resendCode(flow: token, method: method)
            try await context.delivery.runOnce(now: clock.now, logger: Logger(label: "test"))
            return try #require(sent.code(to: destination))
        }

        func shutdown() async throws { try await pool.shutdownGracefully() }
    }

    @Test func everyMethodCompletesAFlowOnce() async throws {
        var world = try await World()
        defer { Task { [world] in try await world.shutdown() } }

        /// Completes `attempt` at once, then checks its flow is used.
        func signsInOnce(_ attempt: SecondStep.Attempt) async throws {
            let signedIn = try await world.complete(attempt)
            #expect(signedIn.answer.user.username == "alice", "\(attempt.method)")
            #expect(signedIn.trustedDeviceToken == nil)
            #expect(signedIn.answer.backupCodesRemaining == (attempt.method == .backup ? 9 : nil), "\(attempt.method)")
            // The flow is used: the same proof again is refused, and counts as no guess.
            let again = await world.refusal(attempt)
            #expect(again?.code == .alreadyUsed, "\(attempt.method): \(String(describing: again))")
        }

        var token = try await world.flow()
        try await signsInOnce(.init(flow: token, method: .totp, code: try world.app.code(at: world.clock.now)))
        token = try await world.flow()
        let sms = try await world.sentCode(.sms, flow: token, to: World.phone)
        try await signsInOnce(.init(flow: token, method: .sms, code: sms))
        token = try await world.flow()
        let email = try await world.sentCode(.email, flow: token, to: "alice@example.com")
        try await signsInOnce(.init(flow: token, method: .email, code: email))
        token = try await world.flow()
        try await signsInOnce(.init(flow: token, method: .backup, code: world.backupCodes[0]))
        token = try await world.flow()
        let flow = try await world.context.loginFlows.active(token)
        let device = try await world.context.deviceKeys.keyDevice("iphone-1", userID: world.alice.id)
        let challenge = try await world.context.deviceKeys.issueChallenge(
            for: device, purpose: .loginFlow, flowID: flow.id)
        try await signsInOnce(
            .init(
                flow: token, method: .deviceKey,
                deviceKey: .init(
                    deviceId: "iphone-1", challengeId: challenge.challengeId,
                    signature: try world.deviceKey.sign(challenge: challenge.challenge))))
        token = try await world.flow()
        let options = try await world.secondStep.passkeyOptions(flow: token)
        try await signsInOnce(
            .init(flow: token, method: .webauthn, passkey: try world.passkey.assertion(options.challenge)))

        // Remember this device: the token comes with the session.
        world.clock.advance(by: 30)
        let remembered = try await world.flow()
        let trusted = try await world.complete(
            .init(
                flow: remembered, method: .totp, code: try world.app.code(at: world.clock.now), trustDevice: true))
        #expect(trusted.trustedDeviceToken?.isEmpty == false)
    }

    @Test func aWrongCodeCountsAndTheFlowStaysUsable() async throws {
        let world = try await World()
        defer { Task { try await world.shutdown() } }
        let token = try await world.flow()
        let wrong = await world.refusal(.init(flow: token, method: .totp, code: "000000"))
        #expect(wrong?.code == .invalidCode && wrong?.attemptsRemaining == 4, "\(String(describing: wrong))")
        let backup = await world.refusal(.init(flow: token, method: .backup, code: "not-a-code"))
        #expect(backup?.code == .invalidCode || backup?.status == 422, "\(String(describing: backup))")
        let signedIn = try await world.complete(
            .init(flow: token, method: .totp, code: try world.app.code(at: world.clock.now)))
        #expect(signedIn.answer.user.username == "alice")
    }

    @Test func aCodeUsedOnceIsAlreadyUsedOnAnotherFlow() async throws {
        let world = try await World()
        defer { Task { try await world.shutdown() } }
        let code = try world.app.code(at: world.clock.now)
        _ = try await world.complete(.init(flow: try await world.flow(), method: .totp, code: code))
        let second = try await world.flow()
        let replay = await world.refusal(.init(flow: second, method: .totp, code: code))
        #expect(replay?.code == .alreadyUsed, "\(String(describing: replay))")
        let backup = world.backupCodes[1]
        _ = try await world.complete(.init(flow: try await world.flow(), method: .backup, code: backup))
        let reused = await world.refusal(.init(flow: second, method: .backup, code: backup))
        #expect(reused?.code == .invalidCode || reused?.code == .alreadyUsed, "\(String(describing: reused))")
        // A replay is no guess: the flow still takes the next code.
        world.clock.advance(by: 30)
        _ = try await world.complete(.init(flow: second, method: .totp, code: try world.app.code(at: world.clock.now)))
    }

    @Test func fiveWrongCodesLockTheFactor() async throws {
        let world = try await World()
        defer { Task { try await world.shutdown() } }
        let token = try await world.flow()
        for left in (0..<5).reversed() {
            let wrong = await world.refusal(.init(flow: token, method: .totp, code: "000000"))
            #expect(wrong?.code == (left == 0 ? .locked : .invalidCode), "\(String(describing: wrong))")
        }
        let right = await world.refusal(
            .init(flow: token, method: .totp, code: try world.app.code(at: world.clock.now)))
        #expect(right?.code == .locked, "\(String(describing: right))")
        #expect(right?.lockoutUntil != nil)
    }

    @Test func anExpiredFlowAndALockedAccountAreRefused() async throws {
        let world = try await World()
        defer { Task { try await world.shutdown() } }
        let token = try await world.flow()
        world.clock.advance(by: world.context.rules.loginFlowLifetime + 1)
        let expired = await world.refusal(
            .init(flow: token, method: .totp, code: try world.app.code(at: world.clock.now)))
        #expect(expired?.code == .expired, "\(String(describing: expired))")
        let unknown = await world.refusal(.init(flow: "no such flow", method: .totp, code: "123456"))
        #expect(unknown?.status == 401, "\(String(describing: unknown))")

        let fresh = try await world.flow()
        #expect(try await world.users.lock(userID: world.alice.id, now: world.clock.now))
        await world.flows.setStatus(.locked, of: world.alice.id)
        let locked = await world.refusal(.init(flow: fresh, method: .backup, code: world.backupCodes[2]))
        #expect(locked?.code == .accountLocked, "\(String(describing: locked))")
    }

    @Test func parallelSubmissionsOnOneFlowUseOneFactor() async throws {
        let world = try await World()
        defer { Task { try await world.shutdown() } }
        let token = try await world.flow()
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for code in world.backupCodes.prefix(8) {
                group.addTask { (try? await world.complete(.init(flow: token, method: .backup, code: code))) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try await world.context.backupCodes.remaining(for: world.alice.id) == world.backupCodes.count - 1)
    }
}
