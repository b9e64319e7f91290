import Crypto
import Foundation

/// Opaque bearer secrets (refresh tokens, login-flow ids): 256 random bits, base64url, stored
/// only as a SHA-256 hash so a database leak does not hand out live tokens.
enum SecureToken {
    /// A new random token: 32 bytes from a CSPRNG, base64url without padding.
    static func generate() -> String {
        SecureRandom.bytes(32).base64URLEncodedString()
    }

    /// The hex SHA-256 of a token, the only form the database holds. Lookups go by this hash
    /// (an index lookup on a uniformly random value leaks nothing useful about other tokens).
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }
}

private let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

extension Collection<UInt8> {
    /// RFC 4648 §5 base64url without padding, as JOSE uses. Written directly (every sign-in
    /// encodes a token's claims and signature): no standard base64 to translate afterwards.
    func base64URLEncodedString() -> String {
        // Four characters for three bytes; two for a last single byte, three for a last pair.
        let length = count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
        return String(unsafeUninitializedCapacity: length) { text in
            var written = 0
            var bytes = makeIterator()
            while let first = bytes.next() {
                let second = bytes.next()
                let third = second == nil ? nil : bytes.next()
                let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
                text[written] = base64URLAlphabet[Int(group >> 18)]
                text[written + 1] = base64URLAlphabet[Int(group >> 12 & 63)]
                written += 2
                if second != nil {
                    text[written] = base64URLAlphabet[Int(group >> 6 & 63)]
                    written += 1
                }
                if third != nil {
                    text[written] = base64URLAlphabet[Int(group & 63)]
                    written += 1
                }
            }
            return written
        }
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
