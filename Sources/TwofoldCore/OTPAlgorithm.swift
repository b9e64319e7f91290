import Crypto

/// The HMAC hash function of an HOTP/TOTP generator (RFC 6238 §1.2 allows SHA-1, SHA-256, SHA-512).
public enum OTPAlgorithm: String, CaseIterable, Sendable, Codable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"

    /// Parses the names used in otpauth URIs and on command lines: `SHA1`, `sha-256`, `sha512`.
    public init?(name: String) {
        let normalised = name.uppercased().replacingOccurrences(of: "-", with: "")
        self.init(rawValue: normalised)
    }

    func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let key = SymmetricKey(data: key)
        switch self {
        case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: return Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
    }
}
