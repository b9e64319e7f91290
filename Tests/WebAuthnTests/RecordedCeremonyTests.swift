import Foundation
import Testing
import TwofoldCore
import TwofoldTestSupport
import X509

@testable import WebAuthn

/// The 38 ceremonies recorded from real authenticators (YubiKeys, Windows Hello TPMs, Apple,
/// Pixel) in `Tests/Fixtures/webauthn/recorded-ceremonies.json`, each verified as its source verifies
/// it: accepted with the credential, counter and attestation trust it lists, or refused.
struct RecordedCeremonyTests {
    struct Ceremony: Decodable, Sendable, CustomTestStringConvertible {
        struct Credential: Decodable, Sendable {
            struct Response: Decodable, Sendable {
                let clientDataJSON: String
                let attestationObject: String?
                let authenticatorData: String?
                let signature: String?
            }
            let id: String
            let response: Response
        }

        struct Expect: Decodable, Sendable {
            let accept: Bool
            let fmt: String?
            let counter: UInt32?
            let previousCounter: UInt32?
            let credentialID: String?
            let credentialPublicKey: String?
            let aaguid: String?
            let trustAnchor: String?
            let verifyAt: String?
            let requireUserVerification: Bool?

            enum CodingKeys: String, CodingKey {
                case accept, fmt, counter, previousCounter, aaguid, trustAnchor, verifyAt, requireUserVerification
                case credentialID = "credentialId_b64url"
                case credentialPublicKey = "credentialPublicKey_b64url"
            }
        }

        let id: String
        let kind: String
        let rpId: String
        let origin: String
        let challenge: String
        let credential: Credential
        let expect: Expect
        var testDescription: String { id }

        enum CodingKeys: String, CodingKey {
            case id, kind, rpId, origin, credential, expect
            case challenge = "challenge_b64url"
        }
    }

    private struct File: Decodable {
        struct Anchor: Decodable { let pem: String }
        let trustAnchors: [String: Anchor]
        let ceremonies: [Ceremony]
    }

    private static let file: File? = {
        let url = BuildProducts.repositoryRoot.appendingPathComponent(
            "Tests/Fixtures/webauthn/recorded-ceremonies.json")
        return (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(File.self, from: $0) }
    }()

    static let ceremonies = file?.ceremonies ?? []

    @Test func theFileHoldsThirtyEightCeremoniesAndFourAnchors() {
        #expect(Self.ceremonies.count == 38)
        #expect(Self.file?.trustAnchors.count == 4)
    }

    private static func bytes(_ text: String?) -> [UInt8] { text.flatMap(Base64URL.decode) ?? [] }

    private static func relyingParty(_ ceremony: Ceremony) throws -> RelyingParty {
        let roots = try ceremony.expect.trustAnchor.map { name in
            [try Certificate(pemEncoded: try #require(file?.trustAnchors[name]?.pem))]
        }
        let time = ceremony.expect.verifyAt.flatMap { try? Date($0, strategy: .iso8601) } ?? Date()
        return RelyingParty(
            id: ceremony.rpId, origins: [ceremony.origin],
            userVerification: ceremony.expect.requireUserVerification == true ? .required : .discouraged,
            attestationRoots: roots ?? [], clock: { time })
    }

    @Test(arguments: ceremonies.filter { $0.kind == "registration" })
    func registration(_ ceremony: Ceremony) async throws {
        let rp = try Self.relyingParty(ceremony)
        let response = ceremony.credential.response
        let verify = {
            try await rp.verifyRegistration(
                clientDataJSON: Self.bytes(response.clientDataJSON),
                attestationObject: Self.bytes(response.attestationObject),
                challenge: Self.bytes(ceremony.challenge))
        }
        guard ceremony.expect.accept else {
            await #expect(throws: WebAuthnError.self) { try await verify() }
            return
        }
        let credential = try await verify()
        #expect(Base64URL.encode(credential.id) == ceremony.expect.credentialID)
        #expect(Base64URL.encode(credential.publicKey) == ceremony.expect.credentialPublicKey)
        #expect(credential.signCount == ceremony.expect.counter)
        #expect(credential.attestation.format == ceremony.expect.fmt)
        if let aaguid = ceremony.expect.aaguid {
            #expect(UUID(uuidString: aaguid).map { withUnsafeBytes(of: $0.uuid) { Array($0) } } == credential.aaguid)
        }
        let trust: AttestationResult.Trust = ceremony.expect.trustAnchor == nil ? .none : .verified
        #expect(credential.attestation.trust == trust, "\(credential.attestation)")
    }

    @Test(arguments: ceremonies.filter { $0.kind == "authentication" })
    func authentication(_ ceremony: Ceremony) async throws {
        let rp = try Self.relyingParty(ceremony)
        let response = ceremony.credential.response
        let authenticatorData = Self.bytes(response.authenticatorData)
        let flags = try AuthenticatorData(authenticatorData).flags
        let verify = {
            try rp.verifyAssertion(
                clientDataJSON: Self.bytes(response.clientDataJSON), authenticatorData: authenticatorData,
                signature: Self.bytes(response.signature), challenge: Self.bytes(ceremony.challenge),
                credential: .init(
                    publicKey: Self.bytes(ceremony.expect.credentialPublicKey),
                    signCount: ceremony.expect.previousCounter ?? 0,
                    backupEligible: flags.contains(.backupEligible), backedUp: flags.contains(.backedUp)))
        }
        guard ceremony.expect.accept else {
            #expect(throws: WebAuthnError.self) { try verify() }
            return
        }
        let assertion = try verify()
        #expect(assertion.signCount == ceremony.expect.counter)
        // The same assertion again: its counter no longer grows (unless both are zero).
        if let counter = ceremony.expect.counter, counter > 0 {
            #expect {
                try rp.verifyAssertion(
                    clientDataJSON: Self.bytes(response.clientDataJSON), authenticatorData: authenticatorData,
                    signature: Self.bytes(response.signature), challenge: Self.bytes(ceremony.challenge),
                    credential: .init(
                        publicKey: Self.bytes(ceremony.expect.credentialPublicKey), signCount: counter,
                        backupEligible: flags.contains(.backupEligible), backedUp: flags.contains(.backedUp)))
            } throws: { ($0 as? WebAuthnError)?.reason == .counterRegression }
        }
    }
}
