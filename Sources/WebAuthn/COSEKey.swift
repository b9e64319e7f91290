import Crypto
import CryptoExtras
import Foundation
import X509

/// A COSE signature algorithm (the IANA "COSE Algorithms" registry) a credential may use.
public enum COSEAlgorithm: Int64, Sendable, CaseIterable, Codable {
    case es256 = -7
    case es384 = -35
    case es512 = -36
    case rs256 = -257
    case ps256 = -37
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-1: only inside TPM attestation statements, never a credential's.
    case rs1 = -65535

    public var name: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .rs256: "RS256"
        case .ps256: "PS256"
        case .edDSA: "EdDSA"
        case .rs1: "RS1"
        }
    }

    /// The algorithms a credential may use, in the order a relying party prefers them.
    public static let credentialAlgorithms: [COSEAlgorithm] = [.es256, .edDSA, .es384, .es512, .ps256, .rs256]

    /// A name for an algorithm number, known or not, for error messages.
    static func describe(_ value: Int64) -> String {
        if let known = COSEAlgorithm(rawValue: value) { return "\(known.name) (\(value))" }
        let others: [Int64: String] = [
            -53: "Ed448", -47: "ES256K", -38: "PS384", -39: "PS512", -258: "RS384", -259: "RS512",
        ]
        return others[value].map { "\($0) (\(value))" } ?? "COSE algorithm \(value)"
    }
}

/// A credential public key in COSE form (RFC 9052/9053): what an authenticator returns at
/// registration and what verifies each later assertion. Also the key of an attestation
/// certificate, with the algorithm its statement names.
public struct COSEKey: Sendable {
    public let algorithm: COSEAlgorithm
    private let key: Key

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case p521(P521.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    /// Reads a COSE key (a CBOR map) and checks that its key type, curve and sizes fit its
    /// algorithm, and that it is a valid key.
    public init(_ cbor: CBOR) throws(WebAuthnError) {
        guard case .map = cbor else { throw Self.failure("the credential public key is not a CBOR map") }
        guard let kty = cbor[1]?.integer else { throw Self.failure("the credential public key has no key type (1)") }
        guard let alg = cbor[3]?.integer else { throw Self.failure("the credential public key has no algorithm (3)") }
        if kty == 1, cbor[-1]?.integer == 7 {
            throw WebAuthnError(.unsupportedKey, "the algorithm EdDSA with the curve Ed448 is not supported")
        }
        guard let algorithm = COSEAlgorithm(rawValue: alg) else {
            throw WebAuthnError(.unsupportedKey, "the algorithm \(COSEAlgorithm.describe(alg)) is not supported")
        }
        self.algorithm = algorithm
        do {
            switch (kty, algorithm) {
            case (2, .es256), (2, .es384), (2, .es512):
                let (curve, size) =
                    switch algorithm {
                    case .es256: (Int64(1), 32)
                    case .es384: (Int64(2), 48)
                    default: (Int64(3), 66)
                    }
                guard cbor[-1]?.integer == curve else {
                    throw Self.failure("an \(algorithm.name) key must be on curve \(curve)")
                }
                guard let x = cbor[-2]?.bytes, let y = cbor[-3]?.bytes, x.count == size, y.count == size else {
                    throw Self.failure("an \(algorithm.name) key needs x and y of \(size) bytes each")
                }
                let point = [0x04] + x + y
                key =
                    switch algorithm {
                    case .es256: .p256(try P256.Signing.PublicKey(x963Representation: point))
                    case .es384: .p384(try P384.Signing.PublicKey(x963Representation: point))
                    default: .p521(try P521.Signing.PublicKey(x963Representation: point))
                    }
            case (3, .rs256), (3, .ps256), (3, .rs1):
                guard let n = cbor[-1]?.bytes, let e = cbor[-2]?.bytes, !n.isEmpty, !e.isEmpty, e.count <= 8 else {
                    throw Self.failure("an RSA key needs its modulus (-1) and exponent (-2)")
                }
                key = .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            case (1, .edDSA):
                guard cbor[-1]?.integer == 6 else {
                    throw WebAuthnError(
                        .unsupportedKey, "the EdDSA curve \(cbor[-1].map { "\($0)" } ?? "none") is not supported")
                }
                guard let x = cbor[-2]?.bytes, x.count == 32 else {
                    throw Self.failure("an Ed25519 key needs x of 32 bytes")
                }
                key = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            default:
                throw Self.failure("the key type \(kty) does not fit the algorithm \(algorithm.name)")
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw Self.failure("the \(algorithm.name) public key is not a valid key")
        }
    }

    /// Reads a COSE key from its CBOR bytes.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        try self.init(CBOR.decode(bytes))
    }

    /// The key of an attestation certificate, used with `algorithm`.
    init(certificate: Certificate, algorithm: COSEAlgorithm) throws(WebAuthnError) {
        self.algorithm = algorithm
        let publicKey = certificate.publicKey
        let key: Key? =
            switch algorithm {
            case .es256: P256.Signing.PublicKey(publicKey).map(Key.p256)
            case .es384: P384.Signing.PublicKey(publicKey).map(Key.p384)
            case .es512: P521.Signing.PublicKey(publicKey).map(Key.p521)
            case .rs256, .ps256, .rs1: _RSA.Signing.PublicKey(publicKey).map(Key.rsa)
            case .edDSA: Curve25519.Signing.PublicKey(publicKey).map(Key.ed25519)
            }
        guard let key else {
            throw WebAuthnError(
                .attestationInvalid, "the attestation certificate's key is not of the algorithm \(algorithm.name)")
        }
        self.key = key
    }

    private static func failure(_ message: String) -> WebAuthnError { WebAuthnError(.unsupportedKey, message) }

    /// The uncompressed point (`04 || x || y`) of an elliptic-curve key.
    var uncompressedPoint: [UInt8]? {
        switch key {
        case .p256(let key): Array(key.x963Representation)
        case .p384(let key): Array(key.x963Representation)
        case .p521(let key): Array(key.x963Representation)
        case .rsa, .ed25519: nil
        }
    }

    /// The key in one canonical encoding (SubjectPublicKeyInfo DER; raw for Ed25519), to tell
    /// whether two keys are the same.
    var canonicalBytes: [UInt8] {
        switch key {
        case .p256(let key): Array(key.derRepresentation)
        case .p384(let key): Array(key.derRepresentation)
        case .p521(let key): Array(key.derRepresentation)
        case .rsa(let key): Array(key.derRepresentation)
        case .ed25519(let key): Array(key.rawRepresentation)
        }
    }

    /// Whether `signature` (DER for ECDSA, raw for EdDSA and RSA) signs `data` with this key.
    /// ECDSA hashes by curve (P-256 with SHA-256, P-384 with SHA-384, P-521 with SHA-512), as
    /// COSE's ES256, ES384 and ES512 define.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch key {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .p384(let key):
            guard let parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .p521(let key):
            guard let parsed = try? P521.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .rsa(let key):
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            switch algorithm {
            case .ps256: return key.isValidSignature(parsed, for: SHA256.hash(data: data), padding: .PSS)
            case .rs1:
                return key.isValidSignature(parsed, for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
            default: return key.isValidSignature(parsed, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
            }
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        }
    }
}
