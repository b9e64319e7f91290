import Crypto
import Foundation
import NIOPosix
import Testing
import TwofoldAPI

@testable import TwofoldServer

/// Backup codes with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct BackupCodeServiceTests {
    @Test func aCodeWorksOnceInAnyCaseAndSpacing() async throws {
        let time = TestClock()
        let clock = ServerClock { time.now }
        let auditor = Auditor(store: InMemoryAuditStore(), clock: clock)
        let guardStore = InMemoryFactorGuardStore()
        let guards = FactorGuard(
            store: guardStore, users: InMemoryUserStore(),
            sessions: SessionService(
                store: InMemorySessionStore(),
                signer: try await TokenService(current: P256.Signing.PrivateKey(), retired: []), audit: auditor,
                clock: clock, refreshTokenLifetime: 86_400, deviceCookies: .forTests),
            audit: auditor, clock: clock, rules: ProductRules())
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let service = BackupCodeService(
            store: InMemoryBackupCodeStore(), guards: guards, secrets: SecretBox(key: SymmetricKey(size: .bits256)),
            hashing: pool, clock: clock)
        let alice = UUID()
        let codes = try await service.regenerate(for: alice, addedBy: nil)
        #expect(codes.count == 10 && Set(codes).count == 10)
        let typed = " " + codes[3].lowercased().replacingOccurrences(of: "-", with: " ") + " "
        #expect(try await service.use(typed, userID: alice, origin: .none) == 9)
        await #expect(throws: Problem.self, "used once") {
            try await service.use(codes[3], userID: alice, origin: .none)
        }
        #expect(
            try await guardStore.state(userID: alice, factor: "backup")?.attempts == 0,
            "a copy just after the use guessed nothing: its slot is given back")
        time.advance(by: BackupCodeService.duplicateWindow + 1)
        await #expect(throws: Problem.self, "used long ago") {
            try await service.use(codes[3], userID: alice, origin: .none)
        }
        #expect(try await guardStore.state(userID: alice, factor: "backup")?.attempts == 1, "an old code counts")
        let fresh = try await service.regenerate(for: alice, addedBy: nil)
        await #expect(throws: Problem.self, "the old set is gone") {
            try await service.use(codes[4], userID: alice, origin: .none)
        }
        #expect(try await service.use(fresh[0], userID: alice, origin: .none) == 9)
        try await pool.shutdownGracefully()
    }
}
