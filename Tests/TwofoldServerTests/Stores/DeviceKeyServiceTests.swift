import Crypto
import Foundation
import NIOPosix
import Testing
import TwofoldAPI
import TwofoldCore

@testable import TwofoldServer

/// Device keys and PINs with in-memory stores: no Vapor, no database.
@Suite(.tags(.database)) struct DeviceKeyServiceTests {
    let clock = TestClock()
    let devices = InMemoryDeviceStore()
    let guardStore = InMemoryFactorGuardStore()
    let audit = InMemoryAuditStore()
    let alice = UUID()
    let key = P256.Signing.PrivateKey()

    func service(_ rules: ProductRules = ProductRules()) async throws -> DeviceKeyService {
        let clock = ServerClock { [clock] in clock.now }
        let auditor = Auditor(store: audit, clock: clock)
        let guards = FactorGuard(
            store: guardStore, users: InMemoryUserStore(),
            sessions: SessionService(
                store: InMemorySessionStore(),
                signer: try await TokenService(current: P256.Signing.PrivateKey(), retired: []), audit: auditor,
                clock: clock, refreshTokenLifetime: 86_400, deviceCookies: .forTests),
            audit: auditor, clock: clock, rules: rules)
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return DeviceKeyService(
            store: devices, guards: guards, passwords: try PasswordHasher(cost: 4, threadPool: pool), audit: auditor,
            clock: clock, rules: rules)
    }

    func enrolled(pinHash: String? = nil) async throws -> DeviceRecord {
        let device = DeviceRecord(
            id: UUID(), userID: alice, deviceID: "iphone-1", deviceModel: "iPhone", method: .secureEnclave,
            publicKey: key.publicKey.x963Representation.base64EncodedString(), enrolledAt: clock.now,
            updatedAt: clock.now, pinHash: pinHash)
        #expect(try await devices.insert(device, addedBy: nil))
        return device
    }

    func signature(over challenge: DeviceChallengeResponse) throws -> DeviceSignature {
        let bytes = try #require(Data(base64Encoded: challenge.challenge))
        return try DeviceSignature(bytes: try key.signature(for: bytes).derRepresentation)
    }

    @Test func oneSignedChallengeSignsInOnceHoweverManyTryIt() async throws {
        let service = try await service()
        let device = try await enrolled()
        let issued = try await service.issueChallenge(for: device, purpose: .signIn, flowID: nil)
        let signature = try signature(over: issued)
        let id = try #require(UUID(uuidString: issued.challengeId))
        let outcomes = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        try await service.check(
                            signature, challengeID: id, purpose: .signIn, flowID: nil, device: device, origin: .none)
                        return 200
                    } catch let problem as Problem {
                        return problem.status
                    } catch {
                        return 500
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == 200 }.count == 1)
        // The rest find it used, or are held back by the factor guard's bound on attempts in
        // flight (how many depends on how the tasks interleave: a loaded machine runs more at once).
        #expect(outcomes.filter { ![200, 409, 429].contains($0) } == [], "\(outcomes)")
        #expect(try await devices.device(id: device.id)?.lastUsedAt == clock.now)
        #expect(try await guardStore.state(userID: alice, factor: DeviceKeyService.signInFactor)?.attempts ?? 0 == 0)
    }

    @Test func aChallengeOfAnotherPurposeIsRefusedWithoutCountingAnAttempt() async throws {
        let service = try await service()
        let device = try await enrolled()
        let issued = try await service.issueChallenge(for: device, purpose: .stepUp, flowID: nil)
        let id = try #require(UUID(uuidString: issued.challengeId))
        await #expect(throws: DeviceKeyService.signatureRefused) {
            try await service.check(
                try signature(over: issued), challengeID: id, purpose: .signIn, flowID: nil, device: device,
                origin: .none)
        }
        #expect(try await guardStore.state(userID: alice, factor: DeviceKeyService.signInFactor) == nil)
        // The right purpose still works, and a wrong signature counts against the guard.
        let other = P256.Signing.PrivateKey()
        let bytes = try #require(Data(base64Encoded: issued.challenge))
        let forged = try DeviceSignature(bytes: try other.signature(for: bytes).derRepresentation)
        await #expect(throws: Problem.self) {
            try await service.check(
                forged, challengeID: id, purpose: .stepUp, flowID: nil, device: device, origin: .none)
        }
        #expect(try await guardStore.state(userID: alice, factor: DeviceKeyService.factor)?.attempts == 1)
        try await service.check(
            try signature(over: issued), challengeID: id, purpose: .stepUp, flowID: nil, device: device,
            origin: .none)
    }

    @Test func anExpiredChallengeIsRefused() async throws {
        let service = try await service()
        let device = try await enrolled()
        let issued = try await service.issueChallenge(for: device, purpose: .signIn, flowID: nil)
        clock.advance(by: ProductRules().deviceChallengeLifetime)
        await #expect(throws: Problem.self) {
            try await service.check(
                try signature(over: issued), challengeID: try #require(UUID(uuidString: issued.challengeId)),
                purpose: .signIn, flowID: nil, device: device, origin: .none)
        }
    }

    /// However many wrong PINs race, only `pinAttempts` are compared; the PIN blocks once.
    @Test func parallelWrongPINsBlockThePINAfterTheAllowedAttempts() async throws {
        let service = try await service()
        let hash = try await service.passwords.hash("482915")
        let device = try await enrolled(pinHash: hash)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do {
                        try await service.checkPIN("000001", device: device, origin: .none)
                        return "accepted"
                    } catch let problem as Problem {
                        return problem.code.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        let attempts = ProductRules().pinAttempts
        #expect(outcomes.filter { $0 == "invalid_code" }.count == attempts - 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == "pin_blocked" }.count == 12 - (attempts - 1))
        #expect(try await devices.device(id: device.id)?.pinBlocked == true)
        let blocked = try await audit.events(
            userID: alice, type: "device.pin_blocked", from: nil, to: nil, offset: 0, limit: 10)
        #expect(blocked.count == 1, "blocked once")
        await #expect(throws: DeviceKeyService.pinBlocked(attempts), "even the right PIN") {
            try await service.checkPIN("482915", device: device, origin: .none)
        }
    }

    @Test func aRightPINStartsTheCountAgain() async throws {
        let service = try await service()
        let device = try await enrolled(pinHash: try await service.passwords.hash("482915"))
        for _ in 0..<(ProductRules().pinAttempts - 1) {
            await #expect(throws: Problem.self) { try await service.checkPIN("000001", device: device, origin: .none) }
        }
        try await service.checkPIN("482915", device: device, origin: .none)
        #expect(try await devices.device(id: device.id)?.pinFailures == 0)
        do {
            try await service.checkPIN("000001", device: device, origin: .none)
            Issue.record("a wrong PIN was accepted")
        } catch let problem as Problem {
            #expect(problem.code == .invalidCode && problem.attemptsRemaining == ProductRules().pinAttempts - 1)
        }
    }
}
