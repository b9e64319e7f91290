import Crypto
import Foundation
import TwofoldCore

/// Opaque bearer secrets (refresh tokens, login-flow ids): 256 random bits, base64url, stored
/// only as a SHA-256 hash so a database leak does not hand out live tokens.
enum SecureToken {
    /// A new random token: 32 bytes from a CSPRNG, base64url without padding.
    static func generate() -> String {
        Base64URL.encode(SecureRandom.bytes(32))
    }

    /// The hex SHA-256 of a token, the only form the database holds. Lookups go by this hash
    /// (an index lookup on a uniformly random value leaks nothing useful about other tokens).
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }
}

extension Sequence<UInt8> {
    /// Lower-case hex, two digits a byte (hashes and MACs as the database and headers hold them).
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
