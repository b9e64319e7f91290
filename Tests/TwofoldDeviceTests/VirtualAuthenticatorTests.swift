import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldDevice
import WebAuthn

/// The virtual authenticator's ceremonies, checked by the project's relying party as the
/// server checks them, and its refusals, as a browser makes them.
struct VirtualAuthenticatorTests {
    static let origin = "https://login.example.org"
    static let relyingParty = RelyingParty(id: "example.org", origins: [origin])

    static func creation(
        rpID: String = "example.org", user: [UInt8] = Array(repeating: 0x11, count: 16), challenge: [UInt8] = random(),
        algorithms: [Int] = [-7, -257], exclude: [String] = [], userVerification: String = "preferred"
    ) -> PasskeyCreationOptions {
        PasskeyCreationOptions(
            rp: .init(id: rpID, name: "Example"),
            user: .init(id: Base64URL.encode(user), name: "pat", displayName: "Pat"),
            challenge: Base64URL.encode(challenge), pubKeyCredParams: algorithms.map { .init(alg: $0) },
            timeout: 60_000, excludeCredentials: exclude.map { PasskeyDescriptor(id: $0, transports: nil) },
            authenticatorSelection: .init(userVerification: userVerification), attestation: "none", hints: nil)
    }

    static func request(
        rpID: String = "example.org", challenge: [UInt8] = random(), allow: [String] = [],
        userVerification: String = "preferred"
    ) -> PasskeyRequestOptions {
        PasskeyRequestOptions(
            challenge: Base64URL.encode(challenge), timeout: 60_000, rpId: rpID,
            allowCredentials: allow.map { PasskeyDescriptor(id: $0, transports: nil) },
            userVerification: userVerification)
    }

    static func random() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    /// Verifies `answer` to `options` as the server does; the credential it registers.
    static func register(_ answer: RegistrationCredential, _ options: PasskeyCreationOptions) async throws
        -> RelyingParty.Credential
    {
        let credential = try await relyingParty.verifyRegistration(
            clientDataJSON: try #require(Base64URL.decode(answer.response.clientDataJSON)),
            attestationObject: try #require(Base64URL.decode(answer.response.attestationObject)),
            challenge: try #require(Base64URL.decode(options.challenge)))
        try credential.check(reportedID: answer.id, rawID: answer.rawId)
        return credential
    }

    static func verify(
        _ answer: AuthenticationCredential, _ options: PasskeyRequestOptions, with credential: RelyingParty.Credential,
        signCount: UInt32? = nil
    ) throws -> RelyingParty.Assertion {
        try relyingParty.verifyAssertion(
            clientDataJSON: try #require(Base64URL.decode(answer.response.clientDataJSON)),
            authenticatorData: try #require(Base64URL.decode(answer.response.authenticatorData)),
            signature: try #require(Base64URL.decode(answer.response.signature)),
            challenge: try #require(Base64URL.decode(options.challenge)),
            credential: .init(
                publicKey: credential.publicKey, signCount: signCount ?? credential.signCount,
                backupEligible: credential.backupEligible, backedUp: credential.backedUp))
    }

    @Test(arguments: ["none", "packed"])
    func itsRegistrationsAndAssertionsVerifyAsTheServerChecksThem(_ format: String) async throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin, format: format)
        let user = Array(repeating: UInt8(0x42), count: 16)
        let options = Self.creation(user: user)
        let answer = try authenticator.create(options)
        let credential = try await Self.register(answer, options)
        #expect(credential.attestation.format == format)
        #expect(credential.attestation.trust == (format == "packed" ? .selfAttested : AttestationResult.Trust.none))
        #expect(credential.userVerified && !credential.backupEligible && credential.signCount == 1)
        #expect(answer.response.transports == ["internal"])

        // Two sign-ins: each verifies, its counter one more than the last, the user handle the
        // one the passkey was made for.
        var stored = credential.signCount
        for expected in [UInt32(2), 3] {
            let request = Self.request()
            let assertion = try authenticator.get(request)
            #expect(assertion.id == answer.id)
            #expect(assertion.response.userHandle.flatMap { Base64URL.decode($0) } == user)
            let verified = try Self.verify(assertion, request, with: credential, signCount: stored)
            #expect(verified.signCount == expected && verified.userVerified)
            stored = verified.signCount
        }
        // The same assertion again is a counter that did not move: a clone, to the server.
        let request = Self.request()
        let replayed = try authenticator.get(request)
        _ = try Self.verify(replayed, request, with: credential, signCount: stored)
        #expect(throws: WebAuthnError.self) {
            try Self.verify(replayed, request, with: credential, signCount: stored + 1)
        }
    }

    @Test func syncedPasskeysAreBackedUpAndKeepNoCounter() async throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin, synced: true)
        let options = Self.creation()
        let credential = try await Self.register(try authenticator.create(options), options)
        #expect(credential.backupEligible && credential.backedUp && credential.signCount == 0)
        let request = Self.request()
        let verified = try Self.verify(try authenticator.get(request), request, with: credential)
        #expect(verified.signCount == 0 && !verified.backupStateChanged)
    }

    @Test func withoutUserVerificationItProvesPresenceOnly() async throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin, verifiesUser: false)
        let options = Self.creation()
        let credential = try await Self.register(try authenticator.create(options), options)
        #expect(!credential.userVerified)
        #expect(throws: VirtualAuthenticator.Refusal.userVerificationUnavailable) {
            try authenticator.get(Self.request(userVerification: "required"))
        }
        #expect(throws: VirtualAuthenticator.Refusal.userVerificationUnavailable) {
            try authenticator.create(Self.creation(user: [9], userVerification: "required"))
        }
    }

    @Test func aRequestIsAnsweredByTheAllowedPasskeyOrTheNewestOfTheRPID() throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin)
        let first = try authenticator.create(Self.creation(user: [1]))
        let second = try authenticator.create(Self.creation(user: [2]))
        let other = try authenticator.create(Self.creation(rpID: "login.example.org", user: [3]))
        #expect(authenticator.passkeys.count == 3)
        #expect(try authenticator.get(Self.request()).id == second.id, "passwordless: the newest of the RP ID")
        #expect(try authenticator.get(Self.request(allow: [first.id, other.id])).id == first.id)
        #expect(try authenticator.get(Self.request(), credentialID: first.id).id == first.id)
        #expect(try authenticator.get(Self.request(rpID: "login.example.org")).id == other.id)
        #expect(throws: VirtualAuthenticator.Refusal.noCredential) {
            try authenticator.get(Self.request(allow: [Base64URL.encode([7, 7, 7])]))
        }
        let removed = authenticator.remove(credentialID: second.id)
        let removedAgain = authenticator.remove(credentialID: second.id)
        #expect(removed && !removedAgain)
        #expect(try authenticator.get(Self.request()).id == first.id)
    }

    @Test func aNewPasskeyForTheSameAccountReplacesTheOld() throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin)
        let old = try authenticator.create(Self.creation(user: [5]))
        let new = try authenticator.create(Self.creation(user: [5]))
        #expect(old.id != new.id)
        #expect(authenticator.passkeys.map(\.id) == [new.id])
    }

    @Test func itRefusesWhatABrowserRefuses() throws {
        var authenticator = VirtualAuthenticator(origin: Self.origin)
        let registered = try authenticator.create(Self.creation())
        #expect(throws: VirtualAuthenticator.Refusal.alreadyRegistered) {
            try authenticator.create(Self.creation(user: [8], exclude: [registered.id]))
        }
        for rpID in ["evil.test", "ample.org", "other.example.org", ""] {
            #expect(throws: VirtualAuthenticator.Refusal.rpIDNotAllowed(rpID: rpID, origin: Self.origin)) {
                try authenticator.create(Self.creation(rpID: rpID))
            }
            #expect(throws: VirtualAuthenticator.Refusal.rpIDNotAllowed(rpID: rpID, origin: Self.origin)) {
                try authenticator.get(Self.request(rpID: rpID))
            }
        }
        #expect(throws: VirtualAuthenticator.Refusal.noSupportedAlgorithm) {
            try authenticator.create(Self.creation(algorithms: [-257, -8]))
        }
        var unreadable = Self.creation()
        unreadable.user.id = "not base64url!"
        #expect(throws: VirtualAuthenticator.Refusal.malformedOptions("user.id is not base64url")) {
            try authenticator.create(unreadable)
        }
        // Nothing refused was kept.
        #expect(authenticator.passkeys.map(\.id) == [registered.id])
    }
}

/// Device keys sign as a Secure Enclave key does, and the server's own parsing accepts them.
struct SoftwareDeviceKeyTests {
    @Test func itsSignaturesVerifyAsTheServerChecksThem() throws {
        let key = SoftwareDeviceKey()
        let publicKey = try DevicePublicKey(base64: key.publicKey)
        let challenge = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        let signature = try key.sign(challenge: challenge.base64EncodedString())
        #expect(Data(base64Encoded: signature)?.first == 0x30, "DER, as SecKeyCreateSignature writes it")
        #expect(publicKey.isValidSignature(try DeviceSignature(base64: signature), for: challenge))
        #expect(!publicKey.isValidSignature(try DeviceSignature(base64: signature), for: challenge.reversed()))
        #expect(!(try DevicePublicKey(base64: SoftwareDeviceKey().publicKey) == publicKey))
    }

    @Test func aStoredKeyIsTheSameKey() throws {
        let key = SoftwareDeviceKey()
        let restored = try SoftwareDeviceKey(rawRepresentation: key.rawRepresentation)
        #expect(restored.publicKey == key.publicKey)
        let challenge = Data([1, 2, 3])
        #expect(
            try DevicePublicKey(base64: key.publicKey).isValidSignature(
                try DeviceSignature(base64: restored.sign(challenge: challenge.base64EncodedString())), for: challenge))
        #expect(throws: (any Error).self) { try SoftwareDeviceKey(rawRepresentation: Data([1, 2, 3])) }
    }

    @Test func aChallengeThatIsNotBase64IsRefused() {
        #expect(throws: SoftwareDeviceKeyError.challengeNotBase64) {
            try SoftwareDeviceKey().sign(challenge: "not base64!")
        }
    }
}
