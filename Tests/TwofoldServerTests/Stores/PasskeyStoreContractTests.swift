import Foundation
import NIOPosix
import Testing
import TwofoldAPI
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// The contract of `PasskeyStore` on its in-memory twin and on the database, and
/// `PasskeyService` on in-memory stores, without Vapor.
@Suite(.tags(.database)) struct PasskeyStoreContractTests {
    @Test func passkeysInMemory() async throws {
        try await PasskeyRecords.contract(InMemoryPasskeyStore(), alice: UUID(), bob: UUID())
    }

    @Test func passkeysInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            try await PasskeyRecords.contract(SQLPasskeyStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }

    /// The service on in-memory stores: register, then a passwordless sign-in, then a replay.
    @Test func theServiceRegistersAndAuthenticatesWithoutVapor() async throws {
        let clock = TestClock()
        let serverClock = ServerClock { [clock] in clock.now }
        let store = InMemoryPasskeyStore()
        let audit = InMemoryAuditStore()
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let ceremonies = CountingExecutor(ThreadPoolExecutor(pool: pool))
        let service = PasskeyService(
            store: store, audit: Auditor(store: audit, clock: serverClock), clock: serverClock,
            settings: WebAuthnSettings(), ceremonies: ceremonies)
        let user = User(
            username: "alice", email: "alice@example.com", phone: nil, role: .user, passwordHash: "x", now: clock.now)
        let origin = RequestOrigin(address: "10.0.0.1", userAgent: nil)
        var passkey = Passkey()
        let options = try await service.creationOptions(for: user, hints: ["client-device"])
        #expect(options.hints == ["client-device"])
        let record = try await service.register(
            passkey.registration(options), name: nil, user: user, origin: origin, addedBy: nil)
        #expect(record.userID == user.id && record.name == "Passkey" && record.signCount == 1)

        let request = try await service.requestOptions(.signIn, userID: nil, flowID: nil)
        let assertion = try passkey.assertion(request.challenge, userHandle: user.id)
        let proof = try await service.authenticate(
            assertion, purpose: .signIn, userID: nil, flowID: nil, origin: origin)
        #expect(proof.passkey.credentialID == passkey.id && proof.userVerified && proof.amr == "hwk")
        #expect(ceremonies.jobs >= 2, "both ceremonies ran on the pool, off the event loops (issue T)")
        #expect(try await store.credential(id: passkey.id)?.signCount == 2)
        await #expect {
            try await service.authenticate(assertion, purpose: .signIn, userID: nil, flowID: nil, origin: origin)
        } throws: { ($0 as? Problem)?.code == .alreadyUsed }
        clock.advance(by: 121)
        let late = try await service.requestOptions(.signIn, userID: nil, flowID: nil)
        clock.advance(by: 121)
        await #expect {
            try await service.authenticate(
                try passkey.assertion(late.challenge, userHandle: user.id), purpose: .signIn, userID: nil, flowID: nil,
                origin: origin)
        } throws: { ($0 as? Problem)?.code == .expired }
        try await pool.shutdownGracefully()
    }
}

/// A task executor that counts the jobs it is given, passing them on.
final class CountingExecutor: TaskExecutor, @unchecked Sendable {
    // Safe: `count` is read and written under `lock` only.
    private let lock = NSLock()
    private var count = 0
    private let base: any TaskExecutor

    init(_ base: any TaskExecutor) { self.base = base }

    var jobs: Int { lock.withLock { count } }

    func enqueue(_ job: consuming ExecutorJob) {
        lock.withLock { count += 1 }
        base.enqueue(job)
    }
}
