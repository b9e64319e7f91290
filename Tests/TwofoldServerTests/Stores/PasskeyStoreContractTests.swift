import Foundation
import NIOPosix
import Testing
import TwofoldAPI
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// The contract of `PasskeyStore` on its in-memory twin and on the database, and
/// `PasskeyService` on in-memory stores, without Vapor.
@Suite struct PasskeyStoreContractTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    static func passkey(_ user: UUID, _ id: String, at offset: Double = 0, count: Int = 0) -> PasskeyRecord {
        PasskeyRecord(
            id: UUID(), userID: user, credentialID: id, name: "Key \(id)", publicKey: "pQECAyYg", algorithm: -7,
            signCount: count, aaguid: "00000000-0000-0000-0000-000000000000", backupEligible: false, backedUp: false,
            transports: ["usb", "nfc"], attestationFormat: "packed", attestationTrust: "self",
            createdAt: now.addingTimeInterval(offset), lastUsedAt: nil)
    }

    /// Passkeys: listed in registration order, a credential ID registered once, renamed and
    /// deleted only by their owner, a counter moved only from the value read; challenges used
    /// once and only while alive, swept after they expire.
    static func contract(_ store: any PasskeyStore, alice: UUID, bob: UUID) async throws {
        let first = passkey(alice, "AAAA", count: 3)
        #expect(try await store.insert(first, addedBy: nil))
        #expect(try await store.insert(passkey(alice, "BBBB", at: 1), addedBy: nil))
        #expect(try await !store.insert(passkey(bob, "AAAA"), addedBy: nil), "a credential ID is registered once")
        #expect(try await store.credentials(userID: alice).map(\.credentialID) == ["AAAA", "BBBB"])
        #expect(try await store.credentials(userID: bob).isEmpty)
        #expect(try await store.credential(id: "AAAA") == first)

        #expect(try await !store.rename("AAAA", userID: bob, to: "Mine"), "not bob's")
        #expect(try await store.rename("AAAA", userID: alice, to: "Work key"))
        #expect(try await store.credential(id: "AAAA")?.name == "Work key")

        #expect(
            try await !store.recordUse(
                "AAAA", previousCount: 2, signCount: 4, backupEligible: true, backedUp: true, now: now))
        #expect(
            try await store.recordUse(
                "AAAA", previousCount: 3, signCount: 4, backupEligible: true, backedUp: true, now: now))
        #expect(
            try await !store.recordUse(
                "AAAA", previousCount: 3, signCount: 4, backupEligible: true, backedUp: true, now: now), "moved once")
        let used = try #require(try await store.credential(id: "AAAA"))
        #expect(used.signCount == 4 && used.backupEligible && used.backedUp && used.lastUsedAt == now)

        #expect(try await !store.delete("BBBB", userID: bob))
        #expect(try await store.delete("BBBB", userID: alice))
        #expect(try await !store.delete("BBBB", userID: alice), "deleted once")

        let challenge = PasskeyChallengeRecord(
            id: UUID(), challenge: "Y2hhbGxlbmdl", purpose: .loginFlow, userID: alice, flowID: UUID(), createdAt: now,
            expiresAt: now.addingTimeInterval(120), usedAt: nil)
        try await store.insertChallenge(challenge)
        let signIn = PasskeyChallengeRecord(
            id: UUID(), challenge: "c2lnbi1pbg", purpose: .signIn, userID: nil, flowID: nil, createdAt: now,
            expiresAt: now.addingTimeInterval(120), usedAt: nil)
        try await store.insertChallenge(signIn)
        #expect(try await store.challenge("Y2hhbGxlbmdl") == challenge)
        #expect(try await store.challenge("c2lnbi1pbg")?.userID == nil)
        #expect(try await !store.claimChallenge(id: signIn.id, now: now.addingTimeInterval(120)), "expired")
        #expect(try await store.claimChallenge(id: challenge.id, now: now))
        #expect(try await !store.claimChallenge(id: challenge.id, now: now), "used once")
        #expect(try await store.challenge("Y2hhbGxlbmdl")?.usedAt == now)
        try await store.deleteChallenges(expiredBefore: now.addingTimeInterval(119))
        #expect(try await store.challenge("Y2hhbGxlbmdl") != nil)
        try await store.deleteChallenges(expiredBefore: now.addingTimeInterval(120))
        #expect(try await store.challenge("Y2hhbGxlbmdl") == nil)
        #expect(try await store.challenge("c2lnbi1pbg") == nil)
    }

    @Test func passkeysInMemory() async throws {
        try await Self.contract(InMemoryPasskeyStore(), alice: UUID(), bob: UUID())
    }

    @Test func passkeysInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await AuthFlowTests.signUp(app, "alice").user.id
            let bob = try await AuthFlowTests.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.contract(SQLPasskeyStore(database: app.twofold.database), alice: alice, bob: bob)
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
