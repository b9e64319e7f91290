import Crypto
import Foundation
import Testing
import TwofoldDevice

@testable import WebAuthn

/// The negative matrix of issue 23: each way a ceremony can be wrong, refused with its own
/// reason and a sentence a person can act on.
struct CeremonyRefusalTests {
    static let challenge = Array(repeating: UInt8(7), count: 32)
    static let relyingParty = RelyingParty(id: "example.org", origins: ["https://example.org"])

    private func register(
        _ authenticator: SoftwarePasskey, relyingParty: RelyingParty = relyingParty,
        clientData: [UInt8]? = nil, attestationObject: [UInt8]? = nil, challenge: [UInt8] = challenge
    ) async throws(WebAuthnError) -> RelyingParty.Credential {
        try await relyingParty.verifyRegistration(
            clientDataJSON: clientData ?? authenticator.clientData(type: "webauthn.create", challenge: Self.challenge),
            attestationObject: attestationObject
                ?? authenticator.attestationObject(authenticatorData: authenticator.authenticatorData(attested: true)),
            challenge: challenge)
    }

    private func refusal(
        _ reason: WebAuthnError.Reason, _ sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async -> String? {
        do {
            try await body()
            Issue.record("accepted; expected \(reason)", sourceLocation: sourceLocation)
            return nil
        } catch let error as WebAuthnError {
            #expect(error.reason == reason, "\(error.message)", sourceLocation: sourceLocation)
            return error.message
        } catch {
            Issue.record("not a WebAuthnError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// A registered credential and an assertion over `challenge`, with what a test changes.
    private func assertion(
        _ authenticator: SoftwarePasskey, stored: RelyingParty.StoredCredential? = nil,
        relyingParty: RelyingParty = relyingParty, type: String = "webauthn.get",
        origin: String? = nil, rpID: String? = nil, challenge: [UInt8] = challenge, expected: [UInt8] = challenge,
        breakSignature: Bool = false
    ) async throws(WebAuthnError) -> RelyingParty.Assertion {
        let clientData = authenticator.clientData(type: type, challenge: challenge, origin: origin)
        let data = authenticator.authenticatorData(attested: false, rpID: rpID)
        var signature = (try? authenticator.sign(data, clientData)) ?? []
        if breakSignature { signature[signature.count - 2] ^= 0x01 }
        let storedKey = CBOREncoder.encode(authenticator.coseKey)
        return try relyingParty.verifyAssertion(
            clientDataJSON: clientData, authenticatorData: data, signature: signature, challenge: expected,
            credential: stored ?? .init(publicKey: storedKey, signCount: 0, backupEligible: false, backedUp: false))
    }

    @Test func aGoodRegistrationAndAssertionAreAccepted() async throws {
        let authenticator = SoftwarePasskey()
        let credential = try await register(authenticator)
        #expect(credential.id == authenticator.credentialID)
        #expect(credential.attestation.trust == .none)
        let result = try await assertion(authenticator)
        #expect(result.userVerified)
    }

    @Test func wrongOrigin() async {
        let message = await refusal(.originNotAllowed) {
            _ = try await assertion(SoftwarePasskey(), origin: "https://evil.test")
        }
        #expect(message == "the origin https://evil.test is not one of this server's origins")
    }

    @Test func wrongRPIDHash() async {
        _ = await refusal(.rpIDMismatch) { _ = try await assertion(SoftwarePasskey(), rpID: "evil.test") }
    }

    @Test func wrongType() async {
        _ = await refusal(.wrongType) { _ = try await assertion(SoftwarePasskey(), type: "webauthn.create") }
        _ = await refusal(.wrongType) {
            let authenticator = SoftwarePasskey()
            _ = try await register(
                authenticator, clientData: authenticator.clientData(type: "webauthn.get", challenge: Self.challenge))
        }
    }

    @Test func challengeMismatched() async {
        _ = await refusal(.challengeMismatch) {
            _ = try await assertion(SoftwarePasskey(), challenge: Array(repeating: 8, count: 32))
        }
        _ = await refusal(.challengeMismatch) {
            _ = try await register(SoftwarePasskey(), challenge: Array(repeating: 8, count: 32))
        }
    }

    @Test func userPresenceMissing() async throws {
        var authenticator = SoftwarePasskey()
        authenticator.flags = [.userVerified]
        _ = await refusal(.userNotPresent) { _ = try await assertion(authenticator) }
        _ = await refusal(.userNotPresent) { _ = try await register(authenticator) }
        // A browser's automatic passkey upgrade registers without UP, when the call says so.
        let waived = try await Self.relyingParty.verifyRegistration(
            clientDataJSON: authenticator.clientData(type: "webauthn.create", challenge: Self.challenge),
            attestationObject: authenticator.attestationObject(
                authenticatorData: authenticator.authenticatorData(attested: true)),
            challenge: Self.challenge, requireUserPresence: false)
        #expect(waived.id == authenticator.credentialID)
    }

    @Test func userVerificationMissingWhenRequired() async throws {
        var authenticator = SoftwarePasskey()
        authenticator.flags = [.userPresent]
        let strict = RelyingParty(id: "example.org", origins: ["https://example.org"], userVerification: .required)
        _ = await refusal(.userNotVerified) { _ = try await assertion(authenticator, relyingParty: strict) }
        _ = await refusal(.userNotVerified) { _ = try await register(authenticator, relyingParty: strict) }
        // Preferred is not required.
        #expect(try await assertion(authenticator).userVerified == false)
    }

    @Test func badSignature() async {
        _ = await refusal(.badSignature) { _ = try await assertion(SoftwarePasskey(), breakSignature: true) }
    }

    @Test func counterRegression() async throws {
        var authenticator = SoftwarePasskey()
        authenticator.signCount = 5
        let key = CBOREncoder.encode(authenticator.coseKey)
        let message = await refusal(.counterRegression) {
            _ = try await assertion(
                authenticator, stored: .init(publicKey: key, signCount: 5, backupEligible: false, backedUp: false))
        }
        #expect(message?.contains("cloned") == true)
        // Growing is fine, and zero on both sides (synced passkeys) is fine.
        #expect(
            try await assertion(
                authenticator, stored: .init(publicKey: key, signCount: 4, backupEligible: false, backedUp: false)
            )
            .signCount == 5)
        authenticator.signCount = 0
        #expect(try await assertion(authenticator).signCount == 0)
    }

    @Test func aBackupStateChangeIsReportedNotRefused() async throws {
        var authenticator = SoftwarePasskey()
        authenticator.flags = [.userPresent, .backupEligible, .backedUp]
        let result = try await assertion(authenticator)
        #expect(result.backupStateChanged)
        #expect(result.backedUp)
    }

    @Test func backedUpWithoutBackupEligible() async {
        var authenticator = SoftwarePasskey()
        authenticator.flags = [.userPresent, .backedUp]
        _ = await refusal(.backupStateInvalid) { _ = try await assertion(authenticator) }
        _ = await refusal(.backupStateInvalid) { _ = try await register(authenticator) }
    }

    @Test func unsupportedAlgorithm() async {
        let authenticator = SoftwarePasskey()
        let es256K: CBOR = .map([
            .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(46)), .init(.negative(0), .unsigned(8)),
            .init(.negative(1), .bytes(Array(repeating: 1, count: 32))),
            .init(.negative(2), .bytes(Array(repeating: 2, count: 32))),
        ])
        let message = await refusal(.unsupportedKey) {
            _ = try await register(
                authenticator,
                attestationObject: authenticator.attestationObject(
                    authenticatorData: authenticator.authenticatorData(attested: true, key: es256K)))
        }
        #expect(message?.contains("ES256K (-47)") == true)
        // An algorithm this server knows but does not allow.
        let onlyEdDSA = RelyingParty(id: "example.org", origins: ["https://example.org"], algorithms: [.edDSA])
        _ = await refusal(.algorithmNotAllowed) { _ = try await register(authenticator, relyingParty: onlyEdDSA) }
    }

    @Test func malformedCBOR() async {
        let authenticator = SoftwarePasskey()
        _ = await refusal(.malformedCBOR) {
            _ = try await register(authenticator, attestationObject: [0xa3, 0x63, 0x66])
        }
    }

    @Test func trailingBytes() async {
        let authenticator = SoftwarePasskey()
        let object = authenticator.attestationObject(authenticatorData: authenticator.authenticatorData(attested: true))
        _ = await refusal(.malformedCBOR) { _ = try await register(authenticator, attestationObject: object + [0x00]) }
        // Bytes after the credential's key inside the authenticator data, with ED clear.
        let data = authenticator.authenticatorData(attested: true) + [0x01]
        _ = await refusal(.malformedAuthenticatorData) {
            _ = try await register(
                authenticator, attestationObject: authenticator.attestationObject(authenticatorData: data))
        }
    }

    @Test func seventeenDeepNesting() async {
        let authenticator = SoftwarePasskey()
        var deep: CBOR = .unsigned(0)
        for _ in 0..<17 { deep = .array([deep]) }
        let object = CBOREncoder.encode(
            .map([
                .init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])), .init(.text("deep"), deep),
            ]))
        let message = await refusal(.malformedCBOR) { _ = try await register(authenticator, attestationObject: object) }
        #expect(message?.contains("deeper than 16") == true)
    }

    @Test func truncatedAuthenticatorData() async {
        let authenticator = SoftwarePasskey()
        let whole = authenticator.authenticatorData(attested: true)
        for length in [0, 36, 37, 54, 60, whole.count - 1] {
            _ = await refusal(.malformedAuthenticatorData) {
                _ = try await register(
                    authenticator,
                    attestationObject: authenticator.attestationObject(authenticatorData: Array(whole.prefix(length))))
            }
        }
    }

    @Test func aCredentialIDOf1024Bytes() async throws {
        var authenticator = SoftwarePasskey()
        authenticator.credentialID = Array(repeating: 0x5a, count: 1024)
        let message = await refusal(.credentialIDTooLong) { _ = try await register(authenticator) }
        #expect(message?.contains("1024") == true)
        authenticator.credentialID = Array(repeating: 0x5a, count: 1023)
        #expect(try await register(authenticator).id.count == 1023)
    }

    @Test func crossOriginNeedsConfiguredTopOrigins() async throws {
        let authenticator = SoftwarePasskey()
        let clientData = authenticator.clientData(
            type: "webauthn.create", challenge: Self.challenge,
            extra: #","crossOrigin":true,"topOrigin":"https://evil.test""#)
        _ = await refusal(.crossOriginNotAllowed) { _ = try await register(authenticator, clientData: clientData) }
        let embedding = RelyingParty(
            id: "example.org", origins: ["https://example.org"], topOrigins: ["https://example.com"])
        _ = await refusal(.crossOriginNotAllowed) {
            _ = try await register(authenticator, relyingParty: embedding, clientData: clientData)
        }
        let allowed = authenticator.clientData(
            type: "webauthn.create", challenge: Self.challenge,
            extra: #","crossOrigin":true,"topOrigin":"https://example.com""#)
        #expect(try await register(authenticator, relyingParty: embedding, clientData: allowed).id.count == 32)
    }

    @Test func malformedClientData() async {
        let authenticator = SoftwarePasskey()
        for json in [
            #"[]"#, #"{"type":"webauthn.create"}"#, #"{"type":1,"challenge":"AA","origin":"x"}"#,
            #"{"type":"webauthn.create","challenge":"*","origin":"https://example.org"}"#,
            #"{"type":"webauthn.create","challenge":"BwcH","origin":"https://example.org","crossOrigin":1}"#,
            // Issue T: a member written twice, plainly or escaped, could be read two ways.
            #"{"type":"webauthn.create","challenge":"BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc","origin":"https://evil.example","origin":"https://example.org"}"#,
            #"{"type":"webauthn.create","challenge":"BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc","origin":"https://example.org","\u006frigin":"https://evil.example"}"#,
        ] {
            _ = await refusal(.malformedClientData) {
                _ = try await register(authenticator, clientData: Array(json.utf8))
            }
        }
    }
}
