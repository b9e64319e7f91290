import Crypto
import Foundation

/// A device-bound P-256 key held in software, signing as an iOS Secure Enclave key does (seed
/// 004): its public key exported as `SecKeyCopyExternalRepresentation` gives it (the X9.63
/// uncompressed point, base64), and a signature as `SecKeyCreateSignature` with
/// `.ecdsaSignatureMessageX962SHA256` makes it (DER ECDSA over SHA-256 of the message, base64).
/// The message is the challenge's bytes, as the server sends them (base64).
public struct SoftwareDeviceKey: Sendable {
    /// The P-256 private key.
    public let privateKey: P256.Signing.PrivateKey

    /// A new key.
    public init() { privateKey = P256.Signing.PrivateKey() }

    /// The key stored earlier as `rawRepresentation` (the CLI keeps its keys so).
    public init(rawRepresentation: Data) throws {
        privateKey = try P256.Signing.PrivateKey(rawRepresentation: rawRepresentation)
    }

    /// The private scalar, for storing the key (owner-only: it is the device's secret).
    public var rawRepresentation: Data { privateKey.rawRepresentation }

    /// The base64 of the uncompressed public point: what enrolment sends as `publicKey`.
    public var publicKey: String { privateKey.publicKey.x963Representation.base64EncodedString() }

    /// The base64 DER signature of `challenge`'s bytes (`challenge` is base64, as the server
    /// sends it).
    public func sign(challenge: String) throws -> String {
        guard let message = Data(base64Encoded: challenge) else { throw SoftwareDeviceKeyError.challengeNotBase64 }
        return try privateKey.signature(for: message).derRepresentation.base64EncodedString()
    }
}

/// Why a `SoftwareDeviceKey` could not sign.
public enum SoftwareDeviceKeyError: Error, Equatable, CustomStringConvertible {
    /// The challenge is not base64.
    case challengeNotBase64
    /// What went wrong, in words.
    public var description: String { "the challenge is not base64" }
}
