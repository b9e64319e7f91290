import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// The contracts of `UserStore` and `DeviceStore`, on their in-memory twins and on the database
/// (SQLite, and PostgreSQL in `scripts/test`'s second run).
@Suite(.tags(.database)) struct UserAndDeviceStoreContractTests {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    static func account(_ name: String, phone: String? = nil, role: User.Role = .user) -> User {
        User(username: name, email: "\(name)@example.com", phone: phone, role: role, passwordHash: "hash", now: now)
    }

    /// Accounts: found by id or either name, listed in order, written once per name, locked and
    /// unlocked once, and each change writing only its own columns.
    static func userContract(_ users: any UserStore) async throws {
        let now = Self.now
        let carol = account("carol", phone: "+14155550199")
        #expect(try await users.insert(carol))
        var sameName = account("carol")
        sameName.email = "other@example.com"
        #expect(try await !users.insert(sameName), "the username is taken")
        let read = try #require(try await users.user(identifier: "carol@example.com"))
        #expect(read.id == carol.id && read.username == "carol" && read.phone == "+14155550199")
        #expect(read.status == .active && read.role == .user && !read.smsEnabled && !read.emailEnabled)
        #expect(read.createdAt == now && read.phoneVerifiedAt == nil && read.primaryMethod == nil)
        #expect(try await users.user(identifier: "carol")?.id == carol.id)
        #expect(try await users.user(id: UUID()) == nil)
        #expect(try await users.users(matching: nil, offset: 0, limit: 10).last?.id == carol.id, "newest last")
        #expect(try await users.users(matching: nil, offset: 0, limit: 0).isEmpty)
        #expect(try await !users.hasAdministrator())
        try await users.insert([account("dave"), account("erin", role: .admin)])
        #expect(try await users.hasAdministrator())
        #expect(try await users.users(matching: nil, offset: 1, limit: 10).map(\.username) == ["dave", "erin"])

        #expect(try await !users.unlock(userID: carol.id, now: now), "not locked")
        #expect(try await users.lock(userID: carol.id, now: now))
        #expect(try await !users.lock(userID: carol.id, now: now), "locked once")
        #expect(try await users.user(id: carol.id)?.status == .locked)
        #expect(try await users.unlock(userID: carol.id, now: now))
        #expect(try await users.user(id: carol.id)?.status == .active)

        let later = now.addingTimeInterval(60)
        #expect(
            try await users.setPasswordHash("new hash", userID: carol.id, now: later, replacing: "hash", addedBy: nil))
        #expect(
            try await !users.setPasswordHash("other", userID: carol.id, now: later, replacing: "hash", addedBy: nil),
            "changed meanwhile: the later change finds another hash")
        try await users.setVerifiedPhone("+14155550100", userID: carol.id, now: later, addedBy: nil)
        var changed = try #require(try await users.user(id: carol.id))
        #expect(changed.passwordHash == "new hash" && changed.updatedAt == later)
        #expect(changed.verifiedPhone == "+14155550100" && !changed.smsEnabled)

        #expect(try await users.emailInUse("dave@example.com", except: carol.id))
        #expect(try await !users.emailInUse("carol@example.com", except: carol.id), "one's own address")
        #expect(try await !users.setEmail("dave@example.com", userID: carol.id, now: later, addedBy: nil), "dave's")
        #expect(try await users.setEmail("carol@example.org", userID: carol.id, now: later, addedBy: nil))
        #expect(try await users.user(identifier: "carol@example.org")?.id == carol.id)

        try await users.enableCodes(.sms, phone: "+14155550111", userID: carol.id, now: later, addedBy: nil)
        try await users.enableCodes(.email, phone: nil, userID: carol.id, now: later, addedBy: nil)
        try await users.setPrimaryMethod(.sms, userID: carol.id, now: later)
        changed = try #require(try await users.user(id: carol.id))
        #expect(changed.smsEnabled && changed.emailEnabled && changed.verifiedPhone == "+14155550111")
        #expect(changed.primaryMethod == .sms)
        #expect(try await users.disableCodes(.email, userID: carol.id, now: later))
        #expect(try await users.user(id: carol.id)?.primaryMethod == .sms, "email was not the primary")
        // Removals racing each other: exactly one finds the codes on.
        let removals = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { try await users.disableCodes(.sms, userID: carol.id, now: later) } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(removals.filter { $0 }.count == 1, "off once: \(removals)")
        #expect(try await !users.disableCodes(.sms, userID: carol.id, now: later), "and stays off")
        changed = try #require(try await users.user(id: carol.id))
        #expect(!changed.smsEnabled && !changed.emailEnabled && changed.primaryMethod == nil)
        #expect(changed.verifiedPhone == "+14155550111", "the number stays on file")
        #expect(changed.status == .active && changed.passwordHash == "new hash", "other columns untouched")
    }

    @Test func usersInMemory() async throws {
        try await Self.userContract(InMemoryUserStore())
    }

    @Test func usersInTheDatabase() async throws {
        try await withTestApp { app in try await Self.userContract(SQLUserStore(database: app.twofold.database)) }
    }

    /// Devices: one per user and app identifier, listed in enrolment order; a key change retires
    /// the open challenges, a biometric change only the biometric ones; a challenge, a PIN
    /// attempt and a first PIN are each claimed once.
    static func deviceContract(_ store: any DeviceStore, alice: UUID, bob: UUID) async throws {
        let now = Self.now
        func device(_ user: UUID, _ name: String, method: DeviceRecord.Method = .secureEnclave, at offset: Double)
            -> DeviceRecord
        {
            DeviceRecord(
                id: UUID(), userID: user, deviceID: name, deviceModel: "iPhone", method: method,
                publicKey: method == .secureEnclave ? "key-\(name)" : nil, enrolledAt: now.addingTimeInterval(offset),
                updatedAt: now)
        }
        let phone = device(alice, "phone", at: -10)
        let tablet = device(alice, "tablet", method: .smsOTP, at: -5)
        let bobsPhone = device(bob, "phone", at: -20)
        for record in [phone, tablet, bobsPhone] { #expect(try await store.insert(record, addedBy: nil)) }
        #expect(try await !store.insert(device(alice, "phone", at: 0), addedBy: nil), "alice has a phone")
        #expect(try await store.devices(userID: alice).map(\.deviceID) == ["phone", "tablet"])
        #expect(try await store.devices(deviceID: "phone").map(\.userID) == [bob, alice])
        #expect(try await store.device("phone", userID: alice) == phone)
        #expect(try await store.device(id: tablet.id)?.method == .smsOTP)

        func challenge(_ purpose: DeviceChallengeRecord.Purpose, expires: Double = 300) -> DeviceChallengeRecord {
            DeviceChallengeRecord(
                id: UUID(), deviceRowID: phone.id, userID: alice, purpose: purpose, flowID: nil, challenge: "c",
                createdAt: now, expiresAt: now.addingTimeInterval(expires))
        }
        let signIn = challenge(.signIn)
        let biometric = challenge(.biometric)
        let expired = challenge(.stepUp, expires: -1)
        for record in [signIn, biometric, expired] { try await store.insertChallenge(record) }
        #expect(try await store.challenge(id: signIn.id) == signIn)
        #expect(try await !store.claimChallenge(id: expired.id, now: now), "expired")
        try await store.changeBiometricKey("bio", deviceRowID: phone.id, now: now)
        #expect(try await store.device(id: phone.id)?.biometricKey == "bio")
        #expect(try await !store.claimChallenge(id: biometric.id, now: now), "retired with the old biometric key")
        #expect(try await store.claimChallenge(id: signIn.id, now: now))
        #expect(try await !store.claimChallenge(id: signIn.id, now: now), "used once")
        let open = challenge(.loginFlow)
        try await store.insertChallenge(open)
        try await store.changeKey(
            deviceRowID: phone.id, method: .secureEnclave, publicKey: "new key", deviceModel: nil, enrolledAt: nil,
            pinHash: nil, now: now, addedBy: nil)
        #expect(try await !store.claimChallenge(id: open.id, now: now), "retired with the old key")
        var stored = try #require(try await store.device(id: phone.id))
        #expect(
            stored.publicKey == "new key" && stored.deviceModel == "iPhone" && stored.enrolledAt == phone.enrolledAt)

        #expect(try await store.setPIN(hash: "pin", deviceRowID: phone.id, onlyIfNone: true, now: now))
        #expect(try await !store.setPIN(hash: "other", deviceRowID: phone.id, onlyIfNone: true, now: now))
        #expect(try await store.takePINAttempt(deviceRowID: phone.id, maximum: 2) == 1)
        #expect(try await store.takePINAttempt(deviceRowID: phone.id, maximum: 2) == 2)
        #expect(try await store.takePINAttempt(deviceRowID: phone.id, maximum: 2) == nil, "none left")
        #expect(try await store.blockPIN(deviceRowID: phone.id))
        #expect(try await !store.blockPIN(deviceRowID: phone.id), "blocked once")
        #expect(try await store.unblockPIN(deviceRowID: phone.id))
        #expect(try await !store.unblockPIN(deviceRowID: phone.id), "unblocked once")
        #expect(try await store.takePINAttempt(deviceRowID: phone.id, maximum: 2) == 1, "the count starts again")
        try await store.clearPINFailures(deviceRowID: phone.id)
        try await store.changeKey(
            deviceRowID: phone.id, method: .smsOTP, publicKey: nil, deviceModel: "iPhone 16",
            enrolledAt: now, pinHash: "fresh pin", now: now, addedBy: nil)
        try await store.markUsed(deviceRowID: phone.id, now: now)
        stored = try #require(try await store.device(id: phone.id))
        #expect(stored.method == .smsOTP && stored.publicKey == nil && stored.deviceModel == "iPhone 16")
        #expect(stored.pinHash == "fresh pin" && stored.pinFailures == 0 && !stored.pinBlocked)
        #expect(stored.lastUsedAt == now && stored.enrolledAt == now)

        try await store.deleteChallenges(expiredBefore: now)
        #expect(try await store.challenge(id: expired.id) == nil)
        #expect(try await store.delete(deviceRowIDs: [phone.id, tablet.id]) == 2)
        #expect(try await store.challenge(id: open.id) == nil, "a device's challenges go with it")
        #expect(try await store.devices(userID: alice).isEmpty)
        #expect(try await store.devices(userID: bob) == [bobsPhone])
    }

    @Test func devicesInMemory() async throws {
        try await Self.deviceContract(InMemoryDeviceStore(), alice: UUID(), bob: UUID())
    }

    @Test func devicesInTheDatabase() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2").user.id
            try await Self.deviceContract(SQLDeviceStore(database: app.twofold.database), alice: alice, bob: bob)
        }
    }
}
