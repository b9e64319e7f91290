import Crypto

/// The HMAC hash function of an HOTP/TOTP generator (RFC 6238 §1.2 allows SHA-1, SHA-256, SHA-512).
public enum OTPAlgorithm: String, CaseIterable, Sendable, Codable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"

    /// Parses the names used in otpauth URIs and on command lines: `SHA1`, `sha-256`, `sha512`.
    public init?(name: String) {
        // The stored form (the raw value) is read on every sign-in: no copies for it.
        if let exact = Self(rawValue: name) {
            self = exact
            return
        }
        self.init(rawValue: String(name.uppercased().filter { $0 != "-" }))
    }

    /// The HMAC of each message under one key, whose keyed state is made once and copied.
    func macs(key: [UInt8], messages: [[UInt8]]) -> [[UInt8]] {
        let key = SymmetricKey(data: key)
        switch self {
        case .sha1: return Self.macs(HMAC<Insecure.SHA1>(key: key), messages)
        case .sha256: return Self.macs(HMAC<SHA256>(key: key), messages)
        case .sha512: return Self.macs(HMAC<SHA512>(key: key), messages)
        }
    }

    private static func macs<H: HashFunction>(_ keyed: HMAC<H>, _ messages: [[UInt8]]) -> [[UInt8]] {
        messages.map { message in
            var hmac = keyed
            hmac.update(data: message)
            return Array(hmac.finalize())
        }
    }
}
