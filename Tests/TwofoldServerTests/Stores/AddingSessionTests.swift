import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// `AddingSession`'s rule on the database (SQLite here; PostgreSQL and `sqlite::memory:` in
/// `scripts/test`'s other runs): a factor is written only while the session adding it is live,
/// checked in the write's own statement, so a session revoked after the bearer check (signed
/// out everywhere, an administrator's reset, a recovery) writes nothing after.
@Suite(.tags(.database)) struct AddingSessionTests {
    @Test func everyFactorWriteOfARevokedSessionChangesNothing() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let (live, revoked) = try await SessionChecks.sessions(app, user: alice)
            let database = app.twofold.database
            let now = Date()

            // A passkey.
            let passkeys = SQLPasskeyStore(database: database)
            await SessionChecks.expectEnded("passkey") {
                _ = try await passkeys.insert(PasskeyRecords.passkey(alice, "REVOKED"), addedBy: revoked)
            }
            #expect(try await passkeys.credential(id: "REVOKED") == nil)
            #expect(try await passkeys.insert(PasskeyRecords.passkey(alice, "LIVE"), addedBy: live))
            #expect(
                try await !passkeys.insert(PasskeyRecords.passkey(alice, "LIVE"), addedBy: live),
                "a credential ID already registered is still that")

            // A device, and a new key for one.
            let devices = SQLDeviceStore(database: database)
            let phone = DeviceRecord(
                id: UUID(), userID: alice, deviceID: "phone", method: .secureEnclave, publicKey: "key",
                enrolledAt: now, updatedAt: now)
            await SessionChecks.expectEnded("device") { _ = try await devices.insert(phone, addedBy: revoked) }
            #expect(try await devices.device("phone", userID: alice) == nil)
            #expect(try await devices.insert(phone, addedBy: live))
            await SessionChecks.expectEnded("a device's new key") {
                try await devices.changeKey(
                    deviceRowID: phone.id, method: .secureEnclave, publicKey: "another key", deviceModel: nil,
                    enrolledAt: nil, pinHash: nil, now: now, addedBy: revoked)
            }
            #expect(try await devices.device(id: phone.id)?.publicKey == "key")
            try await devices.changeKey(
                deviceRowID: phone.id, method: .secureEnclave, publicKey: "new key", deviceModel: nil,
                enrolledAt: nil, pinHash: nil, now: now, addedBy: live)
            #expect(try await devices.device(id: phone.id)?.publicKey == "new key")

            // An authenticator app's activation.
            let totp = SQLTOTPCredentialStore(database: database)
            let pending = TOTPCredentialRecord(
                id: UUID(), userID: alice, status: .pending, secretCiphertext: "sealed", createdAt: now,
                expiresAt: now.addingTimeInterval(600))
            try await totp.replace(with: pending)
            await SessionChecks.expectEnded("authenticator app") {
                _ = try await totp.activate(credentialID: pending.id, now: now, addedBy: revoked)
            }
            #expect(try await totp.credential(userID: alice, status: .active) == nil)
            #expect(try await totp.activate(credentialID: pending.id, now: now, addedBy: live))
            #expect(try await !totp.activate(credentialID: pending.id, now: now, addedBy: live), "once")

            // Codes turned on, and where they go.
            let users = SQLUserStore(database: database)
            await SessionChecks.expectEnded("email codes") {
                try await users.enableCodes(.email, phone: nil, userID: alice, now: now, addedBy: revoked)
            }
            await SessionChecks.expectEnded("SMS codes") {
                try await users.enableCodes(.sms, phone: "+14155550123", userID: alice, now: now, addedBy: revoked)
            }
            await SessionChecks.expectEnded("phone number") {
                try await users.setVerifiedPhone("+14155550123", userID: alice, now: now, addedBy: revoked)
            }
            await SessionChecks.expectEnded("email address") {
                _ = try await users.setEmail("mallory@example.com", userID: alice, now: now, addedBy: revoked)
            }
            let unchanged = try #require(try await users.user(id: alice))
            #expect(!unchanged.emailEnabled && !unchanged.smsEnabled && unchanged.phoneVerifiedAt == nil)
            #expect(unchanged.email == "alice@example.com")
            try await users.enableCodes(.email, phone: nil, userID: alice, now: now, addedBy: live)
            #expect(try await users.setEmail("alice@example.org", userID: alice, now: now, addedBy: live))
            let changed = try #require(try await users.user(id: alice))
            #expect(changed.emailEnabled && changed.email == "alice@example.org")

            // Backup codes: a revoked session neither leaves codes of its own nor wipes the owner's.
            let codes = SQLBackupCodeStore(database: database)
            func set(_ tag: String) -> [BackupCodeRecord] {
                (0..<3).map {
                    BackupCodeRecord(
                        id: UUID(), userID: alice, lookup: "\(tag)\($0)", codeHash: "hash", createdAt: now)
                }
            }
            let owners = set("owner")
            try await codes.replace(userID: alice, with: owners, addedBy: live)
            await SessionChecks.expectEnded("backup codes") {
                try await codes.replace(userID: alice, with: set("thief"), addedBy: revoked)
            }
            #expect(try await codes.code(userID: alice, lookup: "thief0") == nil)
            #expect(try await codes.summary(userID: alice).unused == 3, "the owner's codes are all there")

            // The password: not by a revoked session, and only over the hash it was checked against.
            let hash = unchanged.passwordHash
            await SessionChecks.expectEnded("password") {
                _ = try await users.setPasswordHash(
                    "thief's", userID: alice, now: now, replacing: hash, addedBy: revoked)
            }
            #expect(try await users.user(id: alice)?.passwordHash == hash)
            #expect(try await users.setPasswordHash("owner's", userID: alice, now: now, replacing: hash, addedBy: live))
            #expect(
                try await !users.setPasswordHash("late", userID: alice, now: now, replacing: hash, addedBy: live),
                "a change checked against the old password does not undo the owner's")
            #expect(try await users.user(id: alice)?.passwordHash == "owner's")
        }
    }

    /// An administrator's reset (revoke every session, then remove every factor) racing a stolen
    /// session that adds passkeys as fast as it can: once the reset is done, no passkey is left.
    /// A write that ran before the revocation is removed by the reset; one after it is refused;
    /// on PostgreSQL, one under way holds the session's row, so the revocation waits for it.
    @Test func aResetRacingAStolenSessionLeavesNoFactor() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let (stolen, _) = try await SessionChecks.sessions(app, user: alice)
            let database = app.twofold.database
            let passkeys = SQLPasskeyStore(database: database)
            let sessions = SQLSessionStore(database: database)
            let reset = ResetDone()
            // Four lanes add passkeys until each has tried ten more after the reset ended.
            let written = try await withThrowingTaskGroup(of: Int.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        var (index, afterReset, written) = (0, 0, 0)
                        while afterReset < 10 {
                            let done = await reset.done
                            do {
                                let added = try await passkeys.insert(
                                    PasskeyRecords.passkey(alice, "K\(lane)-\(index)"), addedBy: stolen)
                                written += added ? 1 : 0
                            } catch let problem as Problem where problem.status == 401 {}
                            if done { afterReset += 1 }
                            index += 1
                        }
                        return written
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(20))
                    _ = try await sessions.revokeAll(userID: alice, except: nil, reason: "reset", now: Date())
                    for passkey in try await passkeys.credentials(userID: alice) {
                        _ = try await passkeys.delete(passkey.credentialID, userID: alice)
                    }
                    await reset.finish()
                    return 0
                }
                return try await group.reduce(0, +)
            }
            #expect(written > 0, "the stolen session wrote before the reset")
            let left = try await passkeys.credentials(userID: alice).count
            #expect(left == 0, "\(left) of the \(written) passkeys written survived the reset")
            await SessionChecks.expectEnded("a passkey after the reset") {
                _ = try await passkeys.insert(PasskeyRecords.passkey(alice, "LATE"), addedBy: stolen)
            }
        }
    }
}

/// Whether the reset finished, as the racing lanes read it.
private actor ResetDone {
    private(set) var done = false
    func finish() { done = true }
}
