import Crypto
import Foundation
import SwiftASN1
import TwofoldCore
import X509

// WebAuthn Level 3 §8.3 (TPM) and §8.4 (Android Key) attestation.

extension AttestationVerifier {
    /// §8.3 TPM attestation: `certInfo` (a TPMS_ATTEST) certifies `pubArea` (the credential's key
    /// as the TPM holds it) with `extraData` = hash(authenticatorData ‖ clientDataHash), signed by
    /// the attestation identity key of `x5c`'s leaf.
    static func tpm(_ object: AttestationObject, signed: [UInt8], roots: [Certificate], time: Date)
        async throws(WebAuthnError) -> AttestationResult
    {
        let statement = object.statement
        guard statement["ver"]?.text == "2.0" else {
            throw AttestationObject.failure("a tpm statement's ver is not 2.0")
        }
        guard let algorithmNumber = statement["alg"]?.integer, let signature = statement["sig"]?.bytes,
            let certInfo = statement["certInfo"]?.bytes, let pubArea = statement["pubArea"]?.bytes
        else { throw AttestationObject.failure("a tpm statement needs alg, sig, certInfo and pubArea") }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmNumber), algorithm != .edDSA else {
            throw WebAuthnError(
                .unsupportedKey,
                "the TPM attestation algorithm \(COSEAlgorithm.describe(algorithmNumber)) is not supported")
        }
        guard let x5c = statement["x5c"] else {
            throw AttestationObject.failure("a tpm statement without x5c (ECDAA) is not supported")
        }
        let credential = object.credential
        let area = try TPMPublicArea(pubArea)
        try area.check(matches: credential.publicKeyBytes)

        let attest = try TPMAttest(certInfo)
        guard attest.magic == 0xff54_4347 else { throw invalid("the TPM certInfo's magic is not TPM_GENERATED_VALUE") }
        guard attest.type == 0x8017 else { throw invalid("the TPM certInfo is not of type TPM_ST_ATTEST_CERTIFY") }
        guard attest.extraData == hash(signed, for: algorithm) else {
            throw WebAuthnError(.badSignature, "the TPM certInfo's extraData is not the hash of this registration")
        }
        guard let nameHash = TPMPublicArea.hash(pubArea, algorithm: area.nameAlgorithm),
            attest.attestedName == [UInt8(area.nameAlgorithm >> 8), UInt8(area.nameAlgorithm & 0xff)] + nameHash
        else { throw invalid("the TPM certInfo does not certify this pubArea (its name differs)") }

        let chain = try certificates(x5c)
        let leaf = chain[0]
        guard try COSEKey(certificate: leaf, algorithm: algorithm).isValidSignature(signature, for: certInfo) else {
            throw WebAuthnError(.badSignature, "the TPM attestation's signature does not verify with its certificate")
        }
        try checkAIKCertificate(leaf, aaguid: credential.aaguid)
        return await trust(chain, format: "tpm", roots: roots, time: time)
    }

    /// §8.3.1: version 3, an empty subject, a subject alternative name, the extended key usage
    /// tcg-kp-AIKCertificate, not a CA, and an AAGUID extension (when present) equal to the
    /// credential's.
    private static func checkAIKCertificate(_ leaf: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard leaf.subject.isEmpty else { throw invalid("the TPM attestation certificate's subject is not empty") }
        guard leaf.extensions[oid: .X509ExtensionID.subjectAlternativeName] != nil else {
            throw invalid("the TPM attestation certificate has no subject alternative name")
        }
        guard (try? leaf.extensions.extendedKeyUsage)??.contains(.init(oid: tcgAIKCertificate)) == true else {
            throw invalid("the TPM attestation certificate lacks the extended key usage tcg-kp-AIKCertificate")
        }
        try checkLeaf(leaf, aaguid: aaguid)
    }

    /// tcg-kp-AIKCertificate (2.23.133.8.3).
    static let tcgAIKCertificate: ASN1ObjectIdentifier = [2, 23, 133, 8, 3]

    /// The hash of `data` that a TPM signing with `algorithm` computes.
    private static func hash(_ data: [UInt8], for algorithm: COSEAlgorithm) -> [UInt8] {
        switch algorithm {
        case .es384: Array(SHA384.hash(data: data))
        case .es512: Array(SHA512.hash(data: data))
        case .rs1: Array(Insecure.SHA1.hash(data: data))
        default: Array(SHA256.hash(data: data))
        }
    }

    /// §8.4 Android Key attestation: the leaf certificate holds the credential's key and, in the
    /// key description extension, the client data hash as its challenge; the key was made for
    /// this app only (no `allApplications`), generated in the keystore and for signing.
    static func androidKey(
        _ object: AttestationObject, signed: [UInt8], clientDataHash: [UInt8], roots: [Certificate], time: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        let statement = object.statement
        guard let algorithmNumber = statement["alg"]?.integer, let signature = statement["sig"]?.bytes,
            let x5c = statement["x5c"]
        else { throw AttestationObject.failure("an android-key statement needs alg, sig and x5c") }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmNumber) else {
            throw WebAuthnError(
                .unsupportedKey,
                "the Android Key attestation algorithm \(COSEAlgorithm.describe(algorithmNumber)) is not supported")
        }
        let chain = try certificates(x5c)
        let leaf = chain[0]
        let leafKey = try COSEKey(certificate: leaf, algorithm: algorithm)
        guard leafKey.isValidSignature(signature, for: signed) else {
            throw WebAuthnError(
                .badSignature, "the Android Key attestation's signature does not verify with its certificate")
        }
        try checkKey(of: leaf, is: object.credential.publicKey, "the Android Key")
        guard let description = leaf.extensions[oid: androidKeyDescription] else {
            throw invalid("the Android Key attestation certificate has no key description extension")
        }
        let key = try AndroidKeyDescription(description.value)
        guard ConstantTime.equals(key.challenge, clientDataHash) else {
            throw WebAuthnError(.badSignature, "the Android Key attestation's challenge is not this registration's")
        }
        guard !key.allApplications else {
            throw invalid("the Android Key may be used by every app of the device (allApplications)")
        }
        if let origin = key.origin, origin != 0 {
            throw invalid(
                "the Android Key was not generated in the keystore (origin \(origin), not KM_ORIGIN_GENERATED)")
        }
        if let purposes = key.purposes, !purposes.contains(2) {
            throw invalid("the Android Key is not for signing (purpose \(purposes), not KM_PURPOSE_SIGN)")
        }
        return await trust(chain, format: "android-key", roots: roots, time: time)
    }

    /// The Android key attestation extension (1.3.6.1.4.1.11129.2.1.17).
    static let androidKeyDescription: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
}

/// A reader of TPM 2.0 structures: big-endian integers and sized buffers (TPM2B), each length
/// checked before it is read.
struct TPMReader {
    let bytes: [UInt8]
    var offset = 0
    let what: String

    init(_ bytes: [UInt8], _ what: String) {
        self.bytes = bytes
        self.what = what
    }

    mutating func take(_ count: Int) throws(WebAuthnError) -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else {
            throw WebAuthnError(.malformedAttestation, "the TPM \(what) is truncated")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func integer(_ size: Int) throws(WebAuthnError) -> UInt64 {
        try take(size).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func u16() throws(WebAuthnError) -> UInt16 { UInt16(try integer(2)) }
    mutating func u32() throws(WebAuthnError) -> UInt32 { UInt32(try integer(4)) }

    /// A TPM2B: a 16-bit size, then that many bytes.
    mutating func sized() throws(WebAuthnError) -> [UInt8] { try take(Int(try u16())) }

    func finished() throws(WebAuthnError) {
        guard offset == bytes.count else {
            throw WebAuthnError(.malformedAttestation, "the TPM \(what) has \(bytes.count - offset) bytes too many")
        }
    }
}

/// TPMT_PUBLIC: the key the TPM certifies.
struct TPMPublicArea {
    enum Key {
        case rsa(modulus: [UInt8], exponent: UInt32)
        /// A TPM curve ID (3 P-256, 4 P-384, 5 P-521) and the point.
        case ecc(curve: UInt16, x: [UInt8], y: [UInt8])
    }

    let nameAlgorithm: UInt16
    let key: Key

    static let algorithmNull: UInt16 = 0x0010

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        var reader = TPMReader(bytes, "pubArea")
        let type = try reader.u16()
        nameAlgorithm = try reader.u16()
        _ = try reader.u32()  // objectAttributes
        _ = try reader.sized()  // authPolicy
        switch type {
        case 0x0001:  // TPM_ALG_RSA: symmetric, scheme, keyBits, exponent; unique: the modulus.
            if try reader.u16() != Self.algorithmNull { _ = try reader.take(4) }
            if try reader.u16() != Self.algorithmNull { _ = try reader.u16() }
            _ = try reader.u16()
            let exponent = try reader.u32()
            key = .rsa(modulus: try reader.sized(), exponent: exponent == 0 ? 65537 : exponent)
        case 0x0023:  // TPM_ALG_ECC: symmetric, scheme, curveID, kdf; unique: x and y.
            if try reader.u16() != Self.algorithmNull { _ = try reader.take(4) }
            if try reader.u16() != Self.algorithmNull { _ = try reader.u16() }
            let curve = try reader.u16()
            if try reader.u16() != Self.algorithmNull { _ = try reader.u16() }
            key = .ecc(curve: curve, x: try reader.sized(), y: try reader.sized())
        default:
            throw WebAuthnError(.attestationInvalid, "the TPM pubArea's key type \(type) is neither RSA nor ECC")
        }
        try reader.finished()
    }

    /// Whether this is the key of the COSE bytes `coseKey` (§8.3.2: parameters and unique).
    func check(matches coseKey: [UInt8]) throws(WebAuthnError) {
        let cose = try CBOR.decode(coseKey)
        let same: Bool
        switch key {
        case .rsa(let modulus, let exponent):
            let e = (cose[-2]?.bytes ?? []).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            same = cose[1]?.integer == 3 && cose[-1]?.bytes == modulus && e == UInt64(exponent)
        case .ecc(let curve, let x, let y):
            let coseCurve: Int64? = [3: 1, 4: 2, 5: 3][curve]
            same =
                cose[1]?.integer == 2 && coseCurve != nil && cose[-1]?.integer == coseCurve && cose[-2]?.bytes == x
                && cose[-3]?.bytes == y
        }
        guard same else {
            throw WebAuthnError(.attestationInvalid, "the TPM pubArea's key is not the credential's public key")
        }
    }

    /// The hash a TPM name uses (`nameAlg`), of `data`; `nil` for an algorithm it does not know.
    static func hash(_ data: [UInt8], algorithm: UInt16) -> [UInt8]? {
        switch algorithm {
        case 0x0004: Array(Insecure.SHA1.hash(data: data))
        case 0x000b: Array(SHA256.hash(data: data))
        case 0x000c: Array(SHA384.hash(data: data))
        case 0x000d: Array(SHA512.hash(data: data))
        default: nil
        }
    }
}

/// TPMS_ATTEST of type TPM_ST_ATTEST_CERTIFY: what `certInfo` says.
struct TPMAttest {
    let magic: UInt32
    let type: UInt16
    let extraData: [UInt8]
    /// TPMS_CERTIFY_INFO's `name`: the name algorithm and the hash of the certified pubArea.
    let attestedName: [UInt8]

    init(_ bytes: [UInt8]) throws(WebAuthnError) {
        var reader = TPMReader(bytes, "certInfo")
        magic = try reader.u32()
        type = try reader.u16()
        _ = try reader.sized()  // qualifiedSigner
        extraData = try reader.sized()
        _ = try reader.take(17)  // clockInfo: clock, resetCount, restartCount, safe
        _ = try reader.take(8)  // firmwareVersion
        attestedName = try reader.sized()
        _ = try reader.sized()  // qualifiedName
        try reader.finished()
    }
}

/// The parts of Android's KeyDescription that §8.4 checks.
struct AndroidKeyDescription {
    let challenge: [UInt8]
    /// `allApplications` ([600]) on either authorization list.
    let allApplications: Bool
    /// `origin` ([702]) and `purpose` ([1]) from the union of both lists; `nil` when neither
    /// states it.
    let origin: Int?
    let purposes: [Int]?

    init(_ value: ArraySlice<UInt8>) throws(WebAuthnError) {
        do {
            let root = try DER.parse(value)
            guard case .constructed(let fields) = root.content else { throw Self.malformed }
            let items = Array(fields)
            guard items.count >= 8 else { throw Self.malformed }
            challenge = Array(try ASN1OctetString(derEncoded: items[4]).bytes)
            var allApplications = false
            var origin: Int?
            var purposes: [Int]?
            for list in [items[6], items[7]] {
                guard case .constructed(let entries) = list.content else { throw Self.malformed }
                for entry in entries where entry.identifier.tagClass == .contextSpecific {
                    guard case .constructed(let inner) = entry.content, let value = inner.first(where: { _ in true })
                    else { continue }
                    switch entry.identifier.tagNumber {
                    case 600: allApplications = true
                    case 702: origin = try Int(derEncoded: value)
                    case 1:
                        guard case .constructed(let set) = value.content else { throw Self.malformed }
                        purposes = (purposes ?? []) + (try set.map { try Int(derEncoded: $0) })
                    default: continue
                    }
                }
            }
            self.allApplications = allApplications
            self.origin = origin
            self.purposes = purposes
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw Self.malformed
        }
    }

    private static var malformed: WebAuthnError {
        WebAuthnError(.attestationInvalid, "the Android Key attestation's key description is malformed")
    }
}
