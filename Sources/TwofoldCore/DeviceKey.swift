import Crypto
import Foundation

/// Why a device public key or signature was refused.
public struct DeviceKeyError: Error, Equatable, CustomStringConvertible, Sendable {
    enum Reason: Equatable, Sendable {
        case invalidBase64(field: String)
        case wrongKeyLength(Int)
        case notUncompressedPoint
        case notOnCurve
        case invalidSignature(length: Int)
    }
    let reason: Reason

    public var description: String {
        switch reason {
        case .invalidBase64(let field): return "\(field) is not valid base64"
        case .wrongKeyLength(let length):
            return "a P-256 public key is 65 bytes (uncompressed X9.63 point), not \(length)"
        case .notUncompressedPoint: return "the public key must be an uncompressed point (first byte 0x04)"
        case .notOnCurve: return "the public key is not a point on the P-256 curve"
        case .invalidSignature(let length):
            return "the signature (\(length) bytes) is neither DER-encoded ECDSA nor raw 64-byte r‖s"
        }
    }
}

/// A device-bound P-256 public key, as an iOS Secure Enclave key exports it
/// (`SecKeyCopyExternalRepresentation`: the 65-byte uncompressed X9.63 point), seed 004.
public struct DevicePublicKey: Sendable, Equatable {
    public let key: P256.Signing.PublicKey

    /// Parses the base64 of an uncompressed X9.63 point.
    public init(base64: String) throws(DeviceKeyError) {
        guard let bytes = Data(base64Encoded: base64) else {
            throw DeviceKeyError(reason: .invalidBase64(field: "publicKey"))
        }
        try self.init(x963: bytes)
    }

    /// Parses an uncompressed X9.63 point: `0x04 ‖ X ‖ Y`, 32 bytes each.
    public init(x963 bytes: Data) throws(DeviceKeyError) {
        guard bytes.count == 65 else { throw DeviceKeyError(reason: .wrongKeyLength(bytes.count)) }
        guard bytes.first == 0x04 else { throw DeviceKeyError(reason: .notUncompressedPoint) }
        do { key = try P256.Signing.PublicKey(x963Representation: bytes) } catch {
            throw DeviceKeyError(reason: .notOnCurve)
        }
    }

    /// The base64 of the uncompressed point, the wire form of seed 004.
    public var base64: String { key.x963Representation.base64EncodedString() }

    /// `true` when `signature` is an ECDSA-SHA256 signature of `message` by this key.
    public func isValidSignature<Message: DataProtocol>(
        _ signature: DeviceSignature, for message: Message
    ) -> Bool {
        key.isValidSignature(signature.signature, for: message)
    }

    public static func == (lhs: DevicePublicKey, rhs: DevicePublicKey) -> Bool {
        lhs.key.x963Representation == rhs.key.x963Representation
    }
}

/// An ECDSA P-256 signature in DER (what `SecKeyCreateSignature` with
/// `.ecdsaSignatureMessageX962SHA256` produces) or raw 64-byte `r ‖ s` form.
public struct DeviceSignature: Sendable {
    public let signature: P256.Signing.ECDSASignature

    /// Parses the base64 of a DER or raw signature.
    public init(base64: String) throws(DeviceKeyError) {
        guard let bytes = Data(base64Encoded: base64) else {
            throw DeviceKeyError(reason: .invalidBase64(field: "signature"))
        }
        try self.init(bytes: bytes)
    }

    /// Parses DER first (a DER signature starts with a SEQUENCE tag, 0x30), then raw 64 bytes.
    public init(bytes: Data) throws(DeviceKeyError) {
        if bytes.first == 0x30, bytes.count <= 72,
            let der = try? P256.Signing.ECDSASignature(derRepresentation: bytes)
        {
            signature = der
        } else if bytes.count == 64,
            let raw = try? P256.Signing.ECDSASignature(rawRepresentation: bytes)
        {
            signature = raw
        } else {
            throw DeviceKeyError(reason: .invalidSignature(length: bytes.count))
        }
    }
}
