import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// An attestation object (WebAuthn §6.5): the format, its statement and the authenticator data.
public struct AttestationObject: Sendable {
    public let format: String
    public let statement: CBOR
    public let authenticatorData: AuthenticatorData
    /// The credential the authenticator data attests (a registration always carries one).
    public let credential: AuthenticatorData.AttestedCredential

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        let object = try CBOR.decode(bytes)
        guard case .map = object else { throw Self.failure("it is not a CBOR map") }
        guard let format = object["fmt"]?.text else { throw Self.failure("it has no fmt") }
        guard let statement = object["attStmt"], case .map = statement else {
            throw Self.failure("it has no attStmt map")
        }
        guard let authData = object["authData"]?.bytes else { throw Self.failure("it has no authData") }
        self.format = format
        self.statement = statement
        authenticatorData = try AuthenticatorData(authData)
        guard let credential = authenticatorData.attestedCredential else {
            throw WebAuthnError(
                .malformedAuthenticatorData,
                "the authenticator data of a registration holds no credential (AT is clear)")
        }
        self.credential = credential
    }

    static func failure(_ message: String) -> WebAuthnError {
        WebAuthnError(.malformedAttestation, "the attestation object is malformed: \(message)")
    }
}

/// What an attestation statement showed.
public struct AttestationResult: Sendable, Equatable {
    public enum Trust: String, Sendable, Equatable {
        /// No statement (`none`).
        case none
        /// Signed by the credential's own key: it proves possession, not the maker.
        case selfAttested = "self"
        /// A certificate chain that ends at one of the configured roots.
        case verified
        /// A certificate chain that could not be chained to a configured root (or none is
        /// configured): recorded, and refused only when attestation is required.
        case unverified
    }

    public let format: String
    public let trust: Trust
    /// Why the chain was not verified, when it was not.
    public let note: String?
}

/// The attestation statement formats of WebAuthn Level 3 §8 this relying party checks.
enum AttestationVerifier {
    static let formats = ["none", "packed", "tpm", "android-key", "fido-u2f", "apple"]

    /// Checks `object`'s statement over `clientDataHash`; chains are verified against `roots`
    /// at `time`.
    static func verify(
        _ object: AttestationObject, clientDataHash: [UInt8], roots: [Certificate], time: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let signed = object.authenticatorData.bytes + clientDataHash
        switch object.format {
        case "none":
            guard case .map(let entries) = object.statement, entries.isEmpty else {
                throw WebAuthnError(.attestationInvalid, "a none attestation carries a statement")
            }
            return AttestationResult(format: "none", trust: .none, note: nil)
        case "packed":
            return try await packed(object, signed: signed, roots: roots, time: time)
        case "fido-u2f":
            return try await fidoU2F(object, clientDataHash: clientDataHash, roots: roots, time: time)
        case "apple":
            return try await apple(object, signed: signed, roots: roots, time: time)
        case "tpm":
            return try await tpm(object, signed: signed, roots: roots, time: time)
        case "android-key":
            return try await androidKey(
                object, signed: signed, clientDataHash: clientDataHash, roots: roots, time: time)
        default:
            throw WebAuthnError(
                .unsupportedAttestationFormat,
                "the attestation format \(object.format) is not one this server checks (\(formats.joined(separator: ", ")))"
            )
        }
    }

    /// §8.2 Packed attestation.
    private static func packed(
        _ object: AttestationObject, signed: [UInt8], roots: [Certificate], time: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let statement = object.statement
        guard let algorithmNumber = statement["alg"]?.integer else {
            throw AttestationObject.failure("a packed statement has no alg")
        }
        guard let signature = statement["sig"]?.bytes else {
            throw AttestationObject.failure("a packed statement has no sig")
        }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmNumber) else {
            throw WebAuthnError(
                .unsupportedKey, "the attestation algorithm \(COSEAlgorithm.describe(algorithmNumber)) is not supported"
            )
        }
        let credential = object.credential
        guard let x5c = statement["x5c"] else {
            guard algorithm == credential.publicKey.algorithm else {
                throw WebAuthnError(
                    .attestationInvalid,
                    "the self attestation names \(algorithm.name) but the credential is \(credential.publicKey.algorithm.name)"
                )
            }
            guard credential.publicKey.isValidSignature(signature, for: signed) else {
                throw WebAuthnError(
                    .badSignature, "the self attestation's signature does not verify with the credential's key")
            }
            return AttestationResult(format: "packed", trust: .selfAttested, note: nil)
        }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        guard try COSEKey(certificate: leaf, algorithm: algorithm).isValidSignature(signature, for: signed) else {
            throw WebAuthnError(
                .badSignature, "the packed attestation's signature does not verify with its certificate")
        }
        try checkPackedCertificate(leaf, aaguid: credential.aaguid)
        return await trust(chain, format: "packed", roots: roots, time: time)
    }

    /// §8.2.1: version 3; subject C, O, OU "Authenticator Attestation" and CN; not a CA; an
    /// AAGUID extension, when present, not critical and equal to the credential's.
    private static func checkPackedCertificate(_ leaf: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        let subject = leaf.subject
        func has(_ type: ASN1ObjectIdentifier) -> Bool {
            subject.contains { $0.contains { $0.type == type } }
        }
        for (type, name) in [
            (ASN1ObjectIdentifier.RDNAttributeType.countryName, "C"),
            (.RDNAttributeType.organizationName, "O"), (.RDNAttributeType.organizationalUnitName, "OU"),
            (.RDNAttributeType.commonName, "CN"),
        ] where !has(type) {
            throw invalid("the attestation certificate's subject has no \(name)")
        }
        let unit = subject.flatMap { $0 }.first { $0.type == .RDNAttributeType.organizationalUnitName }
        guard unit.map({ String(describing: $0.value) }) == "Authenticator Attestation" else {
            throw invalid("the attestation certificate's subject OU is not \"Authenticator Attestation\"")
        }
        try checkLeaf(leaf, aaguid: aaguid)
    }

    /// What every attestation certificate profile asks (§8.2.1, §8.3.1): X.509 version 3, not a
    /// CA, and an AAGUID extension, when present, not critical and equal to the credential's.
    static func checkLeaf(_ leaf: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard leaf.version == .v3 else { throw invalid("the attestation certificate is not X.509 version 3") }
        if let constraints = try? leaf.extensions.basicConstraints, case .isCertificateAuthority = constraints {
            throw invalid("the attestation certificate is a CA certificate")
        }
        guard let aaguidExtension = leaf.extensions[oid: fidoAAGUID] else { return }
        guard !aaguidExtension.critical else {
            throw invalid("the attestation certificate's AAGUID extension is critical")
        }
        // The extension holds an OCTET STRING of the 16 bytes.
        guard let node = try? DER.parse(aaguidExtension.value), let inner = try? ASN1OctetString(derEncoded: node),
            Array(inner.bytes) == aaguid
        else { throw invalid("the attestation certificate's AAGUID is not the credential's") }
    }

    /// §8.6 FIDO U2F attestation: one certificate with a P-256 key, signing
    /// `00 || rpIdHash || clientDataHash || credentialId || 04 x y`.
    private static func fidoU2F(
        _ object: AttestationObject, clientDataHash: [UInt8], roots: [Certificate], time: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        guard let x5c = object.statement["x5c"], let signature = object.statement["sig"]?.bytes else {
            throw AttestationObject.failure("a fido-u2f statement needs x5c and sig")
        }
        let chain = try certificates(x5c)
        guard chain.count == 1 else { throw invalid("a fido-u2f statement holds \(chain.count) certificates, not one") }
        let data = object.authenticatorData
        let credential = object.credential
        guard credential.publicKey.algorithm == .es256, let point = credential.publicKey.uncompressedPoint else {
            throw invalid("a fido-u2f credential must be an ES256 key")
        }
        let signed = [0x00] + data.rpIDHash + clientDataHash + credential.credentialID + point
        guard try COSEKey(certificate: chain[0], algorithm: .es256).isValidSignature(signature, for: signed) else {
            throw WebAuthnError(
                .badSignature, "the fido-u2f attestation's signature does not verify with its certificate")
        }
        return await trust(chain, format: "fido-u2f", roots: roots, time: time)
    }

    /// §8.8 Apple anonymous attestation: the leaf certificate carries SHA-256(authData ||
    /// clientDataHash) in extension 1.2.840.113635.100.8.2 and the credential's own key.
    private static func apple(
        _ object: AttestationObject, signed: [UInt8], roots: [Certificate], time: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        guard let x5c = object.statement["x5c"] else { throw AttestationObject.failure("an apple statement needs x5c") }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        guard let nonceExtension = leaf.extensions[oid: appleNonce] else {
            throw invalid("the apple attestation certificate has no nonce extension")
        }
        guard let nonce = try? appleNonce(nonceExtension.value), nonce == Array(SHA256.hash(data: signed)) else {
            throw WebAuthnError(.badSignature, "the apple attestation's nonce is not the hash of this registration")
        }
        try checkKey(of: leaf, is: object.credential.publicKey, "the apple")
        return await trust(chain, format: "apple", roots: roots, time: time)
    }

    /// The certificate's key is the credential's (`format` names the statement in the refusal).
    static func checkKey(of leaf: Certificate, is key: COSEKey, _ format: String) throws(WebAuthnError) {
        guard (try? COSEKey(certificate: leaf, algorithm: key.algorithm))?.canonicalBytes == key.canonicalBytes else {
            throw invalid("\(format) attestation certificate's key is not the credential's")
        }
    }

    /// Apple's nonce extension.
    static let appleNonce: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// The nonce of Apple's extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    private static func appleNonce(_ value: ArraySlice<UInt8>) throws -> [UInt8] {
        let root = try DER.parse(value)
        guard case .constructed(let children) = root.content,
            let tagged = children.first(where: {
                $0.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)
            }),
            case .constructed(let inner) = tagged.content, let octets = inner.first(where: { _ in true })
        else { throw invalid("the apple nonce extension is malformed") }
        return Array(try ASN1OctetString(derEncoded: octets).bytes)
    }

    /// id-fido-gen-ce-aaguid.
    static let fidoAAGUID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    static func invalid(_ message: String) -> WebAuthnError { WebAuthnError(.attestationInvalid, message) }

    /// The certificates of an `x5c` array, leaf first.
    static func certificates(_ x5c: CBOR) throws(WebAuthnError) -> [Certificate] {
        guard case .array(let items) = x5c, !items.isEmpty else {
            throw AttestationObject.failure("x5c is not a non-empty array")
        }
        var chain: [Certificate] = []
        for item in items {
            guard let der = item.bytes, let certificate = try? Certificate(derEncoded: der) else {
                throw AttestationObject.failure("x5c holds something that is not a DER certificate")
            }
            chain.append(certificate)
        }
        return chain
    }

    /// Whether `chain` (leaf first) ends at one of `roots`, checked at `time`.
    static func trust(_ chain: [Certificate], format: String, roots: [Certificate], time: Date) async
        -> AttestationResult
    {
        guard !roots.isEmpty else {
            return AttestationResult(format: format, trust: .unverified, note: "no attestation roots are configured")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            // A TPM attestation certificate's subject alternative name is critical (§8.3.1), and
            // Windows marks its certificate policies critical too: `tpm` has checked the name is
            // there, and WebAuthn asks nothing of the policies.
            if format == "tpm" {
                CheckedCriticalExtensions(oids: [.X509ExtensionID.subjectAlternativeName, [2, 5, 29, 32]])
            }
        }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(chain.dropFirst()))
        switch result {
        case .validCertificate: return AttestationResult(format: format, trust: .verified, note: nil)
        case .couldNotValidate(let failures):
            let reason = failures.first.map { "\($0.policyFailureReason)" } ?? "no chain to a configured root"
            return AttestationResult(format: format, trust: .unverified, note: reason)
        }
    }
}

/// Critical extensions an attestation format has checked itself, so chain validation does not
/// refuse them as unknown.
struct CheckedCriticalExtensions: VerifierPolicy {
    let oids: [ASN1ObjectIdentifier]
    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] { oids }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}
