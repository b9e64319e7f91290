import Foundation
import Testing
import VaporTesting

@testable import TwofoldServer

/// Each store's in-memory twin keeps the SQL store's contract: the same calls, on both, give the
/// same answers (the SQL one on SQLite, and on PostgreSQL in `scripts/test`'s second run).
@Suite struct StoreContractTests {
    /// `alice` and `bob` are users that exist (the tables' foreign keys need them).
    static func trustedDeviceContract(_ store: any TrustedDeviceStore, alice: UUID, bob: UUID) async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func device(_ user: UUID, _ name: String, created: TimeInterval, expires: TimeInterval) -> TrustedDeviceRecord {
            TrustedDeviceRecord(
                id: UUID(), userID: user, tokenHash: "hash-\(name)", name: name,
                createdAt: now.addingTimeInterval(created), expiresAt: now.addingTimeInterval(expires))
        }
        let older = device(alice, "older", created: -20, expires: 100)
        let newer = device(alice, "newer", created: -10, expires: 100)
        let expired = device(alice, "expired", created: -30, expires: -1)
        let bobs = device(bob, "bobs", created: -5, expires: 100)
        for record in [older, newer, expired, bobs] { try await store.insert(record) }

        #expect(try await store.live(userID: alice, now: now).map(\.name) == ["newer", "older"])
        #expect(try await store.markUsed(tokenHash: "hash-older", userID: alice, now: now))
        #expect(try await !store.markUsed(tokenHash: "hash-older", userID: bob, now: now))
        #expect(try await !store.markUsed(tokenHash: "hash-expired", userID: alice, now: now))
        #expect(try await store.live(userID: alice, now: now).last?.lastUsedAt == now)
        #expect(try await store.revoke(id: older.id, userID: bob, now: now) == nil)
        #expect(try await store.revoke(id: older.id, userID: alice, now: now) == "older")
        #expect(try await store.revoke(id: older.id, userID: alice, now: now) == nil)
        #expect(try await !store.markUsed(tokenHash: "hash-older", userID: alice, now: now))
        #expect(try await store.revokeAll(userID: alice, now: now) == 2, "newer and the expired one")
        #expect(try await store.live(userID: alice, now: now).isEmpty)
        #expect(try await store.live(userID: bob, now: now).map(\.name) == ["bobs"])
    }

    @Test func trustedDevicesInMemory() async throws {
        try await Self.trustedDeviceContract(InMemoryTrustedDeviceStore(), alice: UUID(), bob: UUID())
    }

    @Test func trustedDevicesInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await AuthFlowTests.signUp(app, "alice").user.id
            let bob = try await AuthFlowTests.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.trustedDeviceContract(
                SQLTrustedDeviceStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }
}
