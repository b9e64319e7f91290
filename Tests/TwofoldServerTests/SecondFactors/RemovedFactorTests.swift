import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// A factor the owner removes or replaces vouches for nothing any more: the sessions that proved
/// it end, a proof of an old version counts for nothing, and the owner is told (issue V items 1
/// and 8). Each test is an intruder who held one factor, over HTTP.
@Suite(.tags(.database)) struct RemovedFactorTests {
    /// The owner's account with an authenticator app; a session of the owner's that proved it
    /// just now (the owner's own, which removes the intruder's factor).
    static func owner(_ app: Application, clock: TestClock) async throws -> (
        secret: [UInt8], fresh: () async throws -> String
    ) {
        let tokens = try await Accounts.signUp(app)
        let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
        let fresh = {
            clock.advance(by: 30)
            return try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
        }
        return (secret, fresh)
    }

    /// The finding: the owner deletes the intruder's passkey; the intruder's session, signed in
    /// with it a minute ago, added a passkey (200) and moved the email (202). Now it has ended.
    @Test func aRemovedPasskeyEndsTheSessionItSignedIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let owner = try await Self.owner(app, clock: clock)
            var intruderKey = Passkey()
            let added = try await PasskeyCalls.register(app, token: try await owner.fresh(), intruderKey)
            let intruder = try await PasskeyCalls.signInWithPasskey(app, &intruderKey)
            let ownerSession = try await owner.fresh()
            let deleted = try await PasskeyCalls.call(
                app, .DELETE, API.Passkeys.delete.path(added.credential.id), headers: .bearer(ownerSession))
            #expect(deleted.status == 200 || deleted.status == 204, "\(deleted.text)")
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
            let another = try await PasskeyCalls.post(
                app, API.Passkeys.registerOptions.path(), headers: .bearer(intruder))
            #expect(another.status == 401, "the intruder adds nothing")
            #expect(
                try await status { try await client.send(API.Account.show, bearer: ownerSession) } == 200,
                "the owner's session, which proved the authenticator app, stays")
        }
    }

    /// The owner unenrols the intruder's key device: the session the key signed in ends.
    @Test func anUnenrolledDeviceEndsTheSessionItsKeySignedIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let owner = try await Self.owner(app, clock: clock)
            let phone = SoftwareDeviceKey()
            let enrolled = try await DeviceKeySteps.enroll(
                app, token: try await owner.fresh(), phone: phone, device: "intruder")
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            let challenge = try await DeviceKeySteps.challenge(app, device: "intruder")
            let (signedIn, body) = try await DeviceKeySteps.verify(
                app, challenge, signature: try phone.sign(challenge: challenge.challenge), device: "intruder")
            #expect(signedIn == 200, "\(body)")
            let intruder = try DeviceKeySteps.decode(DeviceTokenResponse.self, body).token
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 200)
            let removed = try await DeviceKeySteps.post(
                app, API.DeviceKeys.unenroll.path(), ["username": "alice", "deviceId": "intruder"],
                token: try await owner.fresh())
            #expect(removed.0 == 200, "\(removed.1)")
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
        }
    }

    /// Removing the authenticator app ends every other session that proved it, and tells the
    /// owner at every verified address, with the way to recover the account.
    @Test func aRemovedAuthenticatorAppEndsItsSessionsAndTellsTheOwner() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let owner = try await Self.owner(app, clock: clock)
            let intruder = try await owner.fresh()
            let ownerSession = try await owner.fresh()
            _ = try await Codes.deliverAll(app, clock: clock)
            #expect(try await status { try await client.send(API.TwoFactor.totpDelete, bearer: ownerSession) } < 300)
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
            #expect(try await status { try await client.send(API.Account.show, bearer: ownerSession) } == 200)
            let notices = try await Codes.deliverAll(app, clock: clock)
            let notice = try #require(notices.first { $0.body.contains("was removed from your account") })
            #expect(notice.body.contains("authenticator app"))
            #expect(notice.body.contains("/recovery"), "it says how to recover the account")
        }
    }

    /// A proof counts only while its credential is there unchanged: the policy reads proofs of
    /// an old authenticator-app secret, an old device key, an old phone number or address, or a
    /// removed passkey as nothing, whatever of that kind the account holds now.
    @Test(arguments: [
        (Proof.totp(secretID: UUID()), FactorMethod.totp),
        (Proof.deviceKey("phone", publicKey: "old key"), FactorMethod.deviceKey),
        (Proof.code(.sms, to: "+14155550100"), FactorMethod.sms),
        (Proof.code(.email, to: "old@example.com"), FactorMethod.email),
        (Proof.passkey("removed"), FactorMethod.webauthn),
        (Proof(method: .totp), FactorMethod.totp),
    ])
    func aProofOfAnotherVersionVouchesForNothing(stale: Proof, kind: FactorMethod) throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let account = SignInCredentials(
            totpSecret: UUID(), passkeyIDs: ["kept"], deviceKeys: ["phone": "new key"], smsCodes: true,
            emailCodes: true, phone: "+14155550123", email: "alice@example.com")
        let current: Proof =
            switch kind {
            case .totp: .totp(secretID: try #require(account.totpSecret))
            case .deviceKey: .deviceKey("phone", publicKey: "new key")
            case .sms: .code(.sms, to: "+14155550123")
            case .email: .code(.email, to: "alice@example.com")
            default: .passkey("kept")
            }
        func decide(_ proof: Proof) -> SignInDecision {
            SignInPolicy.decide(
                .add(kind: .webauthn), proof: SessionProof(proofs: [.password: now, proof: now]), account: account,
                now: now, window: 300)
        }
        #expect(decide(current) == .allowed)
        #expect(decide(stale) == .stepUp(.recentSecondFactor))
        // Stored and read back, a proof keeps its binding.
        let stored = SessionProofs.decode(SessionProofs.encode([stale: now, current: now]))
        #expect(Set(stored.keys) == [stale, current])
    }

    /// The owner changes the phone number: the session an SMS code to the old one signed in ends.
    @Test func aNewPhoneNumberEndsTheSessionsTheOldOneSignedIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let intruder = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            let owner = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            try await Accounts.verifyPhone(app, token: owner, clock: clock, phone: "+14155550199")
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
            #expect(try await status { try await client.send(API.Account.show, bearer: owner) } == 200)
        }
    }

    /// The session that added the intruder's passkey goes with it when the owner removes it.
    @Test func theSessionThatAddedARemovedPasskeyEndsToo() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let owner = try await Self.owner(app, clock: clock)
            let intruder = try await owner.fresh()
            let added = try await PasskeyCalls.register(app, token: intruder, Passkey())
            let deleted = try await PasskeyCalls.call(
                app, .DELETE, API.Passkeys.delete.path(added.credential.id), headers: .bearer(try await owner.fresh()))
            #expect(deleted.status < 300, "\(deleted.text)")
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
        }
    }

    /// New backup codes end the session an old one signed in.
    @Test func newBackupCodesEndTheSessionAnOldOneSignedIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let signedIn = try await BackupCodeSteps.useCode(
                app, flow: try await TOTPSteps.startLogin(app), code: codes[0])
            let intruder = try #require(signedIn.1).accessToken.token
            clock.advance(by: 30)
            let session = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            #expect(
                try await status { try await client.send(API.TwoFactor.backupCodesRegenerate, bearer: session) } == 200)
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
            #expect(try await status { try await client.send(API.Account.show, bearer: session) } == 200)
        }
    }

    /// A device ID that ends in a prepending mark (or starts with a combining one) cannot hide
    /// its proof's separators: removing the device still ends the session its key signed in.
    @Test(arguments: ["phone\u{0600}", "\u{0301}phone", "a#b:c=d", "x#"])
    func aDeviceIDCannotHideItsProofFromTheRemoval(device: String) async throws {
        let proof = Proof.deviceKey(device, publicKey: "key")
        let read = SessionProofs.decode(SessionProofs.encode([proof: Date(timeIntervalSince1970: 1_800_000_000)]))
        #expect(read.keys.first?.credential?.unicodeScalars.elementsEqual(device.unicodeScalars) == true)
        #expect(read.keys.first?.version == proof.version)
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let owner = try await Self.owner(app, clock: clock)
            let phone = SoftwareDeviceKey()
            #expect(
                try await DeviceKeySteps.enroll(app, token: try await owner.fresh(), phone: phone, device: device).0
                    == 200)
            let challenge = try await DeviceKeySteps.challenge(app, device: device)
            let (_, body) = try await DeviceKeySteps.verify(
                app, challenge, signature: try phone.sign(challenge: challenge.challenge), device: device)
            let intruder = try DeviceKeySteps.decode(DeviceTokenResponse.self, body).token
            let removed = try await DeviceKeySteps.post(
                app, API.DeviceKeys.unenroll.path(), ["username": "alice", "deviceId": device],
                token: try await owner.fresh())
            #expect(removed.0 == 200, "\(removed.1)")
            #expect(try await status { try await client.send(API.Account.show, bearer: intruder) } == 401)
        }
    }
}
