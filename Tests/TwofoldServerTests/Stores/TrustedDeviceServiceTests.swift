import Foundation
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// The remembered-devices service with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct TrustedDeviceServiceTests {
    let clock = TestClock()
    let store = InMemoryTrustedDeviceStore()
    let audit = InMemoryAuditStore()
    let alice = UUID()
    let origin = RequestOrigin(address: "10.0.0.1", userAgent: "Safari on iPhone")

    var service: TrustedDeviceService {
        let clock = clock
        return TrustedDeviceService(
            store: store, audit: Auditor(store: audit, clock: ServerClock { clock.now }),
            clock: ServerClock { clock.now }, lifetime: 30 * 86_400)
    }

    @Test func aRememberedDeviceIsRecognisedForItsLifetime() async throws {
        let token = try await service.remember(userID: alice, epoch: 0, origin: origin)
        #expect(try await service.recognises(userID: alice, token: token))
        #expect(try await !service.recognises(userID: UUID(), token: token), "another user's device")
        #expect(try await !service.recognises(userID: alice, token: token + "x"))
        #expect(try await !service.recognises(userID: alice, token: nil))
        #expect(try await !service.recognises(userID: alice, token: String(repeating: "a", count: 129)))
        let listed = try await service.list(userID: alice)
        #expect(listed.map(\.name) == ["Safari on iPhone"] && listed.first?.lastUsedAt == clock.now)
        clock.advance(by: 30 * 86_400)
        #expect(try await !service.recognises(userID: alice, token: token), "expired after 30 days")
        #expect(try await service.list(userID: alice).isEmpty)
        #expect(await audit.entries.map(\.event) == [.trustedDeviceAdded])
        #expect(await audit.entries.first?.origin == origin)
    }

    @Test func revokingEndsADeviceOnceAndIsAudited() async throws {
        let token = try await service.remember(userID: alice, epoch: 0, origin: origin)
        let id = try #require(try await service.list(userID: alice).first).id
        await #expect(throws: Problem.self, "another user cannot revoke it") {
            try await service.revoke(id: id, userID: UUID(), origin: origin)
        }
        try await service.revoke(id: id, userID: alice, origin: origin)
        #expect(try await !service.recognises(userID: alice, token: token))
        await #expect(throws: Problem.self, "a second revoke finds nothing") {
            try await service.revoke(id: id, userID: alice, origin: origin)
        }
        _ = try await service.remember(userID: alice, epoch: 0, origin: origin)
        _ = try await service.remember(userID: alice, epoch: 0, origin: .none)
        try await service.revokeAll(userID: alice, origin: origin)
        try await service.revokeAll(userID: alice, origin: origin)  // nothing left: not audited
        #expect(try await service.list(userID: alice).isEmpty)
        let details = await audit.entries.filter { $0.event == .trustedDeviceRevoked }.map(\.detail)
        #expect(details == ["Safari on iPhone", "all 2 remembered devices"])
        #expect(await audit.entries.filter { $0.event == .trustedDeviceAdded }.last?.detail == "Unknown device")
    }
}
