import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore

/// Device cookies (OWASP "Slow down online guessing attacks with device cookies", issue V item
/// 3): every completed sign-in hands the browser or app a token naming the account, and the
/// account's next password sign-in that carries it is counted against that device alone, not
/// against the account-wide bucket strangers can empty. The token skips nothing: the second
/// step is still asked.
///
/// A token is `d1.<payload>.<mac>`, both base64url: the payload is the user's ID (16 bytes),
/// when it was issued (8 bytes, seconds), the account's `SessionEpoch` then (8 bytes: signing out
/// everywhere, a password change or a reset raises it, and every earlier token stops counting)
/// and 8 random bytes; the MAC is HMAC-SHA256 over the
/// payload with a key derived from the server's secret. Nothing is stored: checking one is a
/// MAC compared in constant time, so a sign-in pays no database write for it.
struct DeviceCookies: Sendable {
    let key: SymmetricKey
    /// How long a token names its device (a year).
    let lifetime: TimeInterval

    init(secrets: SecretBox, lifetime: TimeInterval = 365 * 86_400) {
        key = secrets.lookupKey(purpose: "device cookies")
        self.lifetime = lifetime
    }

    private static let prefix = "d1."
    /// The longest token read: a longer string is not one (bounded work on any input).
    static let maxLength = 128

    /// A new token for `userID`'s device, issued at `now`.
    func issue(userID: UUID, epoch: Int, now: Date) -> String {
        var payload: [UInt8] = []
        payload.reserveCapacity(40)
        withUnsafeBytes(of: userID.uuid) { payload.append(contentsOf: $0) }
        withUnsafeBytes(of: Int64(now.timeIntervalSince1970).bigEndian) { payload.append(contentsOf: $0) }
        withUnsafeBytes(of: Int64(epoch).bigEndian) { payload.append(contentsOf: $0) }
        payload.append(contentsOf: SecureRandom.bytes(8))
        let mac = HMAC<SHA256>.authenticationCode(for: payload, using: key)
        return Self.prefix + Base64URL.encode(payload) + "." + Base64URL.encode(Array(mac))
    }

    /// Whether `token` is one this server issued for `userID`'s device within its lifetime, since
    /// the account's sessions last all ended (`epoch`, its `SessionEpoch` now).
    func recognises(_ token: String?, userID: UUID, epoch: Int, now: Date) -> Bool {
        guard let token, token.utf8.count <= Self.maxLength, token.hasPrefix(Self.prefix) else { return false }
        let parts = token.dropFirst(Self.prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Base64URL.decode(parts[0]), payload.count == 40,
            let mac = Base64URL.decode(parts[1])
        else { return false }
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: key) else { return false }
        let owner = payload.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        let issued = payload.dropFirst(16).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let signedEpoch = payload.dropFirst(24).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let age = now.timeIntervalSince1970 - TimeInterval(issued)
        return owner == userID && signedEpoch == Int64(epoch) && age >= -60 && age <= lifetime
    }
}
