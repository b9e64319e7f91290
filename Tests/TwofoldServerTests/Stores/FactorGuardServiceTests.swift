import Crypto
import Foundation
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// Wrong-code limits with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct FactorGuardServiceTests {
    let clock = TestClock()
    let store = InMemoryFactorGuardStore()
    let users = InMemoryUserStore()
    let sessionStore = InMemorySessionStore()
    let audit = InMemoryAuditStore()
    let alice = UUID()

    func guardService(_ rules: ProductRules = ProductRules()) async throws -> FactorGuard {
        let clock = ServerClock { [clock] in clock.now }
        let auditor = Auditor(store: audit, clock: clock)
        let sessions = SessionService(
            store: sessionStore, signer: try await TokenService(current: P256.Signing.PrivateKey(), retired: []),
            audit: auditor, clock: clock, refreshTokenLifetime: 86_400, deviceCookies: .forTests)
        _ = try await users.insert(
            User(
                id: alice, username: "alice", email: "alice@example.com", phone: nil, role: .user,
                passwordHash: "hash", now: clock.now()))
        return FactorGuard(store: store, users: users, sessions: sessions, audit: auditor, clock: clock, rules: rules)
    }

    /// One wrong code: a slot, then the failure; the problem it answers.
    func wrong(_ guardService: FactorGuard, countsTowardAccount: Bool = true) async -> Problem? {
        do {
            try await guardService.begin("totp", userID: alice)
            try await guardService.failed(
                "totp", userID: alice, countsTowardAccount: countsTowardAccount, origin: .none)
        } catch let problem as Problem {
            return problem
        } catch {
            return nil
        }
    }

    @Test func fiveWrongLockForFiveMinutesThenTen() async throws {
        let guardService = try await guardService()
        var answers: [String] = []
        for _ in 0..<5 { answers.append(await wrong(guardService)?.code.rawValue ?? "") }
        #expect(answers == ["invalid_code", "invalid_code", "invalid_code", "invalid_code", "locked"])
        #expect(await wrong(guardService)?.retryAfter == 300, "locked: no slot, the lock's time left")
        clock.advance(by: 300)
        for _ in 0..<4 { _ = await wrong(guardService) }
        #expect(await wrong(guardService)?.retryAfter == 600, "the second lock doubles")
        #expect(
            await audit.entries.filter { $0.event == .lockout }.map(\.detail) == [
                "totp locked for 5 minutes", "totp locked for 10 minutes",
            ])
    }

    @Test func aRightCodeStartsTheCountAgain() async throws {
        let guardService = try await guardService()
        for _ in 0..<4 { _ = await wrong(guardService) }
        #expect(try await guardService.admit("totp", userID: alice), "there is a count to forget")
        try await guardService.succeeded("totp", userID: alice)
        #expect(await wrong(guardService)?.attemptsRemaining == 4)
    }

    @Test func twentyInADayLockTheAccountAndEndItsSessions() async throws {
        var rules = ProductRules()
        rules.accountLockFailures = 6
        let guardService = try await guardService(rules)
        let user = User(
            id: alice, username: "alice", email: "a@example.com", phone: nil, role: .user, passwordHash: "",
            now: clock.now)
        _ = try await guardService.sessions.start(user: user, methods: ["pwd"], proofs: [.password], origin: .none)
        for _ in 0..<5 { _ = await wrong(guardService) }
        clock.advance(by: 300)
        #expect(await wrong(guardService)?.code == .accountLocked)
        #expect(await users.locked == [alice])
        #expect(try await sessionStore.liveSessions(userID: alice).isEmpty, "the lock ended the sessions")
        #expect(await audit.entries.contains { $0.event == .accountLocked })
    }

    @Test func failuresAStrangerCausesNeverLockTheAccount() async throws {
        var rules = ProductRules()
        rules.accountLockFailures = 5
        let guardService = try await guardService(rules)
        for _ in 0..<3 {
            for _ in 0..<5 { _ = await wrong(guardService, countsTowardAccount: false) }
            clock.advance(by: 24 * 3600)
        }
        #expect(await users.locked.isEmpty)
        #expect(try await store.tally(userID: alice, factor: "totp", since: .distantPast).failures == 0)
    }
}
