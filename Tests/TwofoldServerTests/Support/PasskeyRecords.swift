import Foundation
import NIOPosix
import Testing
import TwofoldAPI
import VaporTesting
import WebAuthn

@testable import TwofoldServer

/// Passkey records as the store keeps them, and the contract every passkey store meets.
enum PasskeyRecords {
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    static func passkey(_ user: UUID, _ id: String, at offset: Double = 0, count: Int = 0) -> PasskeyRecord {
        PasskeyRecord(
            id: UUID(), userID: user, credentialID: id, name: "Key \(id)", publicKey: "pQECAyYg", algorithm: -7,
            signCount: count, aaguid: "00000000-0000-0000-0000-000000000000", backupEligible: false, backedUp: false,
            transports: ["usb", "nfc"], attestationFormat: "packed", attestationTrust: "self",
            createdAt: now.addingTimeInterval(offset), lastUsedAt: nil)
    }

    /// Passkeys: listed in registration order, a credential ID registered once, renamed and
    /// deleted only by their owner, a counter moved only from the value read; challenges used
    /// once and only while alive, swept after they expire.
    static func contract(_ store: any PasskeyStore, alice: UUID, bob: UUID) async throws {
        let first = passkey(alice, "AAAA", count: 3)
        #expect(try await store.insert(first, addedBy: nil))
        #expect(try await store.insert(passkey(alice, "BBBB", at: 1), addedBy: nil))
        #expect(try await !store.insert(passkey(bob, "AAAA"), addedBy: nil), "a credential ID is registered once")
        #expect(try await store.credentials(userID: alice).map(\.credentialID) == ["AAAA", "BBBB"])
        #expect(try await store.credentials(userID: bob).isEmpty)
        #expect(try await store.credential(id: "AAAA") == first)

        #expect(try await !store.rename("AAAA", userID: bob, to: "Mine"), "not bob's")
        #expect(try await store.rename("AAAA", userID: alice, to: "Work key"))
        #expect(try await store.credential(id: "AAAA")?.name == "Work key")

        #expect(
            try await !store.recordUse(
                "AAAA", previousCount: 2, signCount: 4, backupEligible: true, backedUp: true, now: now))
        #expect(
            try await store.recordUse(
                "AAAA", previousCount: 3, signCount: 4, backupEligible: true, backedUp: true, now: now))
        #expect(
            try await !store.recordUse(
                "AAAA", previousCount: 3, signCount: 4, backupEligible: true, backedUp: true, now: now), "moved once")
        let used = try #require(try await store.credential(id: "AAAA"))
        #expect(used.signCount == 4 && used.backupEligible && used.backedUp && used.lastUsedAt == now)

        #expect(try await !store.delete("BBBB", userID: bob))
        #expect(try await store.delete("BBBB", userID: alice))
        #expect(try await !store.delete("BBBB", userID: alice), "deleted once")

        let challenge = PasskeyChallengeRecord(
            id: UUID(), challenge: "Y2hhbGxlbmdl", purpose: .loginFlow, userID: alice, flowID: UUID(), createdAt: now,
            expiresAt: now.addingTimeInterval(120), usedAt: nil)
        try await store.insertChallenge(challenge)
        let signIn = PasskeyChallengeRecord(
            id: UUID(), challenge: "c2lnbi1pbg", purpose: .signIn, userID: nil, flowID: nil, createdAt: now,
            expiresAt: now.addingTimeInterval(120), usedAt: nil)
        try await store.insertChallenge(signIn)
        #expect(try await store.challenge("Y2hhbGxlbmdl") == challenge)
        #expect(try await store.challenge("c2lnbi1pbg")?.userID == nil)
        #expect(try await !store.claimChallenge(id: signIn.id, now: now.addingTimeInterval(120)), "expired")
        #expect(try await store.claimChallenge(id: challenge.id, now: now))
        #expect(try await !store.claimChallenge(id: challenge.id, now: now), "used once")
        #expect(try await store.challenge("Y2hhbGxlbmdl")?.usedAt == now)
        try await store.deleteChallenges(expiredBefore: now.addingTimeInterval(119))
        #expect(try await store.challenge("Y2hhbGxlbmdl") != nil)
        try await store.deleteChallenges(expiredBefore: now.addingTimeInterval(120))
        #expect(try await store.challenge("Y2hhbGxlbmdl") == nil)
        #expect(try await store.challenge("c2lnbi1pbg") == nil)
    }
}
