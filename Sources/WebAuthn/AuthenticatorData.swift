import Foundation

/// The authenticator data of a ceremony (WebAuthn §6.1): RP ID hash, flags, signature counter,
/// and at registration the attested credential data. Extensions are skipped by their CBOR length.
public struct AuthenticatorData: Sendable {
    public struct Flags: OptionSet, Sendable, Equatable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// The credential an authenticator made (present at registration).
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The COSE key's bytes as the authenticator wrote them.
        public let publicKeyBytes: [UInt8]
        public let publicKey: COSEKey
    }

    /// Credential IDs are at most this long (WebAuthn §5.8.3).
    public static let maximumCredentialIDLength = 1023

    public let bytes: [UInt8]
    public let rpIDHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?

    /// Authenticator data is at most this long: 37 bytes, a credential ID of up to 1023, a
    /// public key and a few extensions fit in far less.
    public static let maximumSize = 16 * 1024

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        self.bytes = bytes
        guard bytes.count <= Self.maximumSize else {
            throw Self.failure("it is \(bytes.count) bytes long; at most \(Self.maximumSize) are read")
        }
        guard bytes.count >= 37 else {
            throw Self.failure("it is \(bytes.count) bytes long; it needs at least 37")
        }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var rest = bytes[37...]
        if flags.contains(.attestedCredentialData) {
            guard rest.count >= 18 else { throw Self.failure("the attested credential data is cut short") }
            let aaguid = Array(rest.prefix(16))
            let length = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
            rest = rest.dropFirst(18)
            guard length <= Self.maximumCredentialIDLength else {
                throw WebAuthnError(
                    .credentialIDTooLong,
                    "the credential ID is \(length) bytes long; at most \(Self.maximumCredentialIDLength) are allowed")
            }
            guard rest.count >= length else { throw Self.failure("the credential ID is cut short") }
            let credentialID = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            let (key, used) = try Self.item(rest, "the credential public key")
            let keyBytes = Array(rest.prefix(used))
            rest = rest.dropFirst(used)
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID, publicKeyBytes: keyBytes, publicKey: try COSEKey(key))
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let (extensions, used) = try Self.item(rest, "the extensions")
            guard case .map = extensions else { throw Self.failure("the extensions are not a CBOR map") }
            rest = rest.dropFirst(used)
        }
        guard rest.isEmpty else { throw Self.failure("\(rest.count) bytes follow its last part") }
    }

    private static func failure(_ message: String) -> WebAuthnError {
        WebAuthnError(.malformedAuthenticatorData, "the authenticator data is malformed: \(message)")
    }

    /// One CBOR item at the start of `bytes`; a malformed one is malformed authenticator data.
    private static func item(_ bytes: ArraySlice<UInt8>, _ name: String) throws(WebAuthnError) -> (CBOR, Int) {
        do {
            return try CBOR.decodePrefix(bytes)
        } catch {
            throw failure("\(name): \(error.message)")
        }
    }
}
