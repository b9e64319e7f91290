import Crypto
import Foundation

/// Opaque bearer secrets (refresh tokens, login-flow ids): 256 random bits, base64url, stored
/// only as a SHA-256 hash so a database leak does not hand out live tokens.
enum SecureToken {
    /// A new random token: 32 bytes from the system CSPRNG, base64url without padding.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64URLEncodedString()
    }

    /// The hex SHA-256 of a token, the only form the database holds. Lookups go by this hash
    /// (an index lookup on a uniformly random value leaks nothing useful about other tokens).
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension Data {
    /// RFC 4648 §5 base64url without padding, as JOSE uses.
    func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
