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

    static func rateLimitContract(_ store: any RateLimitStore) async throws {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<3 { #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now)) }
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "the bucket is empty")
        #expect(try await store.tokens("k") == 0)
        now.addTimeInterval(1)
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "half a token after a second")
        now.addTimeInterval(1)
        #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now), "a whole one after two")
        #expect(
            try await !store.take("k", capacity: 3, perSecond: 0.5, now: now.addingTimeInterval(-10)),
            "a clock behind refills nothing")
        now.addTimeInterval(3600)
        for _ in 0..<3 { #expect(try await store.take("k", capacity: 3, perSecond: 0.5, now: now)) }
        #expect(try await !store.take("k", capacity: 3, perSecond: 0.5, now: now), "refilled to its capacity, no more")
        try await store.refill("k", capacity: 3, now: now)
        #expect(try await store.tokens("k") == 3)
        try await store.refill("other", capacity: 3, now: now)
        #expect(try await store.tokens("other") == 0, "refilling a bucket that does not exist makes none")
        #expect(try await store.take("other", capacity: 1, perSecond: 1, now: now))
    }

    @Test func rateLimitsInMemory() async throws {
        try await Self.rateLimitContract(InMemoryRateLimitStore())
    }

    @Test func rateLimitsInTheDatabase() async throws {
        try await withTestApp { app in
            try await Self.rateLimitContract(SQLRateLimitStore(database: app.twofold.database))
        }
    }

    /// Parallel takes from one bucket never take more than it holds.
    @Test func parallelTakesHoldTheLimit() async throws {
        try await withTestApp { app in
            let store = SQLRateLimitStore(database: app.twofold.database)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 {
                    group.addTask { try await store.take("p", capacity: 10, perSecond: 0.001, now: now) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(taken == 10)
        }
    }
}
