import Crypto
import Foundation
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// Sessions with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct SessionServiceTests {
    static let totpProof = Proof(method: .totp, version: "secret-1")

    let clock = TestClock()
    let store = InMemorySessionStore()
    let audit = InMemoryAuditStore()
    let origin = RequestOrigin(address: "10.0.0.1", userAgent: "test")
    let user = User(
        username: "alice", email: "alice@example.com", phone: nil, role: .user, passwordHash: "",
        now: Date(timeIntervalSince1970: 1_700_000_000))

    func service() async throws -> SessionService {
        let clock = clock
        return SessionService(
            store: store, signer: try await TokenService(current: P256.Signing.PrivateKey(), retired: []),
            audit: Auditor(store: audit, clock: ServerClock { clock.now }), clock: ServerClock { clock.now },
            refreshTokenLifetime: 30 * 86_400, deviceCookies: .forTests)
    }

    @Test func aRefreshTokenRotatesOnceAndItsReuseEndsTheSession() async throws {
        let sessions = try await service()
        let started = try await sessions.start(user: user, methods: ["pwd"], proofs: [.password], origin: origin)
        let sessionID = try #require(try await sessions.list(userID: user.id, current: nil).first).id
        clock.advance(by: 60)
        let rotated = try await sessions.refresh(started.refreshToken.token, origin: origin)
        #expect(rotated.refreshToken.token != started.refreshToken.token)
        #expect(try await sessions.live(sessionID: sessionID, userID: user.id) != nil)
        // The first token again: a copy. The session ends, and the thief's rotated token with it.
        await #expect(throws: Problem.self) { try await sessions.refresh(started.refreshToken.token, origin: origin) }
        #expect(try await sessions.live(sessionID: sessionID, userID: user.id) == nil)
        await #expect(throws: Problem.self) { try await sessions.refresh(rotated.refreshToken.token, origin: origin) }
        #expect(await audit.entries.map(\.event) == [.refreshTokenReused])
    }

    @Test func anExpiredRefreshTokenIsToldAsExpired() async throws {
        let sessions = try await service()
        let started = try await sessions.start(user: user, methods: ["pwd"], proofs: [.password], origin: origin)
        clock.advance(by: 30 * 86_400)
        do {
            _ = try await sessions.refresh(started.refreshToken.token, origin: origin)
            Issue.record("an expired refresh token was accepted")
        } catch let problem as Problem {
            #expect(problem.code == .expired)
        }
    }

    @Test func stepUpRaisesAuthTimeAndAddsTheMethod() async throws {
        let sessions = try await service()
        _ = try await sessions.start(user: user, methods: ["pwd"], proofs: [.password], origin: origin)
        let session = try #require(try await sessions.list(userID: user.id, current: nil).first)
        clock.advance(by: 600)
        _ = try await sessions.stepUp(
            caller: AuthenticatedUser(
                userID: user.id, sessionID: session.id, methods: ["pwd"], authTime: session.authTime),
            amr: "otp", proof: Self.totpProof)
        let stepped = try #require(try await store.session(id: session.id))
        #expect(stepped.methods == ["pwd", "otp", "mfa"] && stepped.authTime == clock.now)
        #expect(
            stepped.proofs == [.password: session.authTime, Self.totpProof: clock.now], "each proof keeps its own time")
        try await sessions.recordAdded(["totp"], sessionID: session.id)
        let added = try #require(try await sessions.live(sessionID: session.id, userID: user.id)).addedFactors
        #expect(added.contains("totp"))
        #expect(!added.contains("sms"))
    }

    @Test func aSessionIsRevokedOnlyByItsUser() async throws {
        let sessions = try await service()
        _ = try await sessions.start(user: user, methods: ["pwd"], proofs: [.password], origin: origin)
        let session = try #require(try await sessions.list(userID: user.id, current: nil).first)
        await #expect(throws: Problem.self) {
            try await sessions.revoke(sessionID: session.id, ofUser: UUID(), reason: "x", origin: origin)
        }
        try await sessions.revoke(sessionID: session.id, ofUser: user.id, reason: "x", origin: origin)
        try await sessions.revoke(sessionID: session.id, ofUser: user.id, reason: "x", origin: origin)
        #expect(await audit.entries.count == 1, "audited when it ended, not again")
        #expect(try await sessions.list(userID: user.id, current: nil).isEmpty)
    }
}
