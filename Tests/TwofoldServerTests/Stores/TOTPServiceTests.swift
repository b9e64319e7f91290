import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldCore

@testable import TwofoldServer

/// Authenticator apps with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct TOTPServiceTests {
    let clock = TestClock()
    let store = InMemoryTOTPCredentialStore()
    let guardStore = InMemoryFactorGuardStore()
    let audit = InMemoryAuditStore()
    let alice = UUID()

    func service() async throws -> TOTPService {
        let clock = ServerClock { [clock] in clock.now }
        let auditor = Auditor(store: audit, clock: clock)
        let sessions = SessionService(
            store: InMemorySessionStore(),
            signer: try await TokenService(current: P256.Signing.PrivateKey(), retired: []), audit: auditor,
            clock: clock, refreshTokenLifetime: 86_400, deviceCookies: .forTests)
        let guards = FactorGuard(
            store: guardStore, users: InMemoryUserStore(), sessions: sessions, audit: auditor, clock: clock,
            rules: ProductRules())
        return TOTPService(
            store: store, guards: guards, secrets: SecretBox(key: SymmetricKey(size: .bits256)), clock: clock,
            issuer: "Twofold", pendingLifetime: 600)
    }

    @Test func setupConfirmAndCodesUsedOnce() async throws {
        let totp = try await service()
        let setup = try await totp.setup(userID: alice, account: "alice@example.com")
        #expect(setup.otpauthUri.hasPrefix("otpauth://totp/Twofold:alice@example.com?secret="))
        let secret = try Base32.decode(setup.secret)
        let app = try TOTP(secret: secret)
        await #expect(throws: Problem.self, "a wrong code does not confirm") {
            try await totp.confirm("000000", userID: alice, origin: .none, addedBy: nil)
        }
        try await totp.confirm(try app.code(at: clock.now), userID: alice, origin: .none, addedBy: nil)
        let active = try #require(try await totp.active(for: alice))
        await #expect(throws: Problem.self, "the confirming code's step is used") {
            try await totp.check(try app.code(at: clock.now), credential: active, origin: .none)
        }
        clock.advance(by: 30)
        let fresh = try #require(try await totp.active(for: alice))
        try await totp.check(try app.code(at: clock.now), credential: fresh, origin: .none)
        await #expect(throws: Problem.self, "a second setup is refused while one is active") {
            try await totp.setup(userID: alice, account: "alice@example.com")
        }
        #expect(try await totp.remove(userID: alice))
        #expect(try await !totp.remove(userID: alice))
    }

    @Test func anExpiredSetupIsGone() async throws {
        let totp = try await service()
        let setup = try await totp.setup(userID: alice, account: "alice@example.com")
        clock.advance(by: 601)
        do {
            try await totp.confirm(
                try TOTP(secret: try Base32.decode(setup.secret)).code(at: clock.now), userID: alice, origin: .none,
                addedBy: nil)
            Issue.record("an expired setup was confirmed")
        } catch let problem as Problem {
            #expect(problem.status == 410)
        }
        #expect(try await store.credential(userID: alice, status: .pending) == nil)
    }

    @Test func aReplayIsTheSameAnswerAndNotAGuess() async throws {
        let totp = try await service()
        let setup = try await totp.setup(userID: alice, account: "alice@example.com")
        let app = try TOTP(secret: try Base32.decode(setup.secret))
        try await totp.confirm(try app.code(at: clock.now), userID: alice, origin: .none, addedBy: nil)
        let active = try #require(try await totp.active(for: alice))
        for _ in 0..<6 {
            do {
                try await totp.check(try app.code(at: clock.now), credential: active, origin: .none)
            } catch let problem as Problem {
                #expect(problem.code == .alreadyUsed)
            }
        }
        #expect(try await guardStore.state(userID: alice, factor: "totp")?.attempts ?? 0 == 0, "never counted")
    }
}
