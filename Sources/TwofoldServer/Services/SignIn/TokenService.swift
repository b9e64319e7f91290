import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import TwofoldAPI
import TwofoldCore

/// Signs and verifies access tokens (ES256 JWTs) and publishes the public keys as a JWKS.
///
/// The current key signs; a retired key (its public half, kept in the data folder until every
/// token it signed has expired) verifies only tokens issued before it was retired, and leaves the
/// JWKS, and memory, once those have all expired (issue S item 6, issue T).
///
/// A token is read once, here: its header by a parser that refuses a member written twice, and
/// the one `kid` it names both picks the key and, for a retired key, bounds what it verifies.
/// (Reading the header twice, once to pick the key and again to find the bound, let a header
/// naming two `kid`s pick one key and escape the other's bound.)
struct TokenService: Sendable {
    /// The default life of an access token (`TWOFOLD_ACCESS_TOKEN_SECONDS`).
    static let defaultLifetime: TimeInterval = 15 * 60

    /// How long an access token lives; no token living longer verifies.
    let lifetime: TimeInterval

    let currentKeyID: String
    /// Signing is done here, directly: every sign-in signs one token.
    private let signingKey: P256.Signing.PrivateKey
    private let verifyingKey: P256.Signing.PublicKey
    /// The encoded JOSE header of every token the current key signs.
    private let encodedHeader: String
    /// The current key's JWK.
    private let currentJWK: JSONWebKeySet.Key
    /// Retired keys, by `kid`, until their last token has expired.
    private let retired: RetiredKeys

    init(
        current: P256.Signing.PrivateKey, retired: [RetiredSigningKey], lifetime: TimeInterval = defaultLifetime
    ) async throws {
        self.lifetime = lifetime
        let currentKeyID = Self.keyID(for: current.publicKey)
        var retiredKeys: [String: RetiredKeys.Key] = [:]
        for retiredKey in retired {
            let kid = Self.keyID(for: retiredKey.key)
            guard kid != currentKeyID else { continue }
            retiredKeys[kid] = .init(
                key: retiredKey.key, jwk: JSONWebKeySet.Key(retiredKey.key, kid: kid), retiredAt: retiredKey.retiredAt)
        }
        self.currentKeyID = currentKeyID
        self.signingKey = current
        self.verifyingKey = current.publicKey
        self.encodedHeader = Base64URL.encode(#"{"alg":"ES256","kid":"\#(currentKeyID)","typ":"JWT"}"#.utf8)
        self.currentJWK = JSONWebKeySet.Key(current.publicKey, kid: currentKeyID)
        self.retired = RetiredKeys(retiredKeys, tokenLifetime: lifetime)
    }

    /// `GET /.well-known/jwks.json` at `now`: the current key, and each retired key while a
    /// token it signed before its retirement may be unexpired.
    func jwks(now: Date) -> JSONWebKeySet {
        JSONWebKeySet(keys: [currentJWK] + retired.live(at: now).sorted { $0.retiredAt > $1.retiredAt }.map(\.jwk))
    }

    /// The retired keys still held (their last token may be unexpired at `now`).
    func retiredKeyIDs(at now: Date) -> [String] {
        retired.live(at: now).map { Self.keyID(for: $0.key) }
    }

    /// RFC 7638 thumbprint of the public JWK, base64url: stable, and names the key without a registry.
    static func keyID(for key: P256.Signing.PublicKey) -> String {
        let jwk = JSONWebKeySet.Key(key, kid: "")
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    func issue(userID: UUID, sessionID: UUID, methods: [String], authTime: Date, now: Date) throws -> TokenDTO {
        // Whole seconds: NumericDate values that every verifier reads as integers.
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expiresAt = now.addingTimeInterval(lifetime)
        let claims = AccessTokenClaims(
            sub: .init(value: userID.canonicalText), sid: sessionID.canonicalText, amr: methods,
            authTime: Int(authTime.timeIntervalSince1970), iat: .init(value: now), exp: .init(value: expiresAt),
            iss: .init(value: AccessTokenClaims.issuer))
        return TokenDTO(token: try sign(claims), expiresAt: expiresAt)
    }

    /// RFC 7515 compact JWS with ES256 (RFC 7518 §3.4: the signature is R and S, 32 bytes each);
    /// NumericDate claims in whole seconds, as JWTKit writes them.
    func sign(_ claims: AccessTokenClaims) throws -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(claims.json.utf8)
        let signature = try signingKey.signature(for: Self.digest(signingInput))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// SHA-256 of `text`'s UTF-8, hashed straight from the string's bytes (Swift strings are
    /// contiguous UTF-8): through `Data` and the generic `DataProtocol` path it cost as much again.
    private static func digest(_ text: some StringProtocol) -> SHA256.Digest {
        var hasher = SHA256()
        var bytes = String(text)
        bytes.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hasher.finalize()
    }

    /// The JOSE header members Twofold reads.
    private struct Header: Decodable {
        let alg: String
        let kid: String?
    }

    /// The claims of a token signed by one of our keys and valid at `now`; `nil` otherwise. The
    /// header and the claims must not name a member twice; the header's `alg` must be ES256 and
    /// its `kid` one of our keys; `iat` must not be in the future, and no token lives longer
    /// than an access token does; a retired key's only if it was issued before the key retired
    /// (whole seconds, so a token from the second of the retirement counts as before it).
    func verify(_ token: String, now: Date) async -> AccessTokenClaims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4096, parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]).map { Data($0) },
            (try? JSONUniqueMembers.check(headerBytes)) != nil,
            let header = try? JSONDecoder().decode(Header.self, from: headerBytes), header.alg == "ES256",
            let kid = header.kid,
            let payload = Base64URL.decode(parts[1]).map { Data($0) }, (try? JSONUniqueMembers.check(payload)) != nil,
            let signatureBytes = Base64URL.decode(parts[2]).map { Data($0) },
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        let key: P256.Signing.PublicKey
        var retiredAt: Date?
        if kid == currentKeyID {
            key = verifyingKey
        } else if let retiredKey = retired.key(kid, at: now) {
            (key, retiredAt) = (retiredKey.key, retiredKey.retiredAt)
        } else {
            return nil
        }
        let signingInput = token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        guard key.isValidSignature(signature, for: Self.digest(Substring(signingInput))) else { return nil }
        guard let claims = try? Wire.tokenClaimsDecoder().decode(AccessTokenClaims.self, from: payload),
            claims.iss.value == AccessTokenClaims.issuer,
            claims.exp.value > now,
            claims.iat.value <= now.addingTimeInterval(1),
            claims.exp.value.timeIntervalSince(claims.iat.value) <= lifetime
        else { return nil }
        if let retiredAt, claims.iat.value > retiredAt { return nil }
        return claims
    }
}

/// The retired signing keys, each dropped once every token it signed has expired, so a server
/// that runs for months holds only the keys it may still need.
final class RetiredKeys: Sendable {
    struct Key: Sendable {
        let key: P256.Signing.PublicKey
        let jwk: JSONWebKeySet.Key
        let retiredAt: Date
    }

    private let keys: NIOLockedValueBox<[String: Key]>
    private let tokenLifetime: TimeInterval

    init(_ keys: [String: Key], tokenLifetime: TimeInterval) {
        self.keys = NIOLockedValueBox(keys)
        self.tokenLifetime = tokenLifetime
    }

    /// The key `kid` while a token it signed before retiring may be unexpired at `now`.
    func key(_ kid: String, at now: Date) -> Key? {
        live(at: now, keeping: kid).first
    }

    /// Every key still needed at `now` (only `kid`'s, when given); the others are dropped.
    func live(at now: Date, keeping kid: String? = nil) -> [Key] {
        keys.withLockedValue { keys in
            keys = keys.filter { [tokenLifetime] in $0.value.retiredAt.addingTimeInterval(tokenLifetime) > now }
            guard let kid else { return Array(keys.values) }
            return keys[kid].map { [$0] } ?? []
        }
    }
}

extension JSONWebKeySet.Key {
    init(_ key: P256.Signing.PublicKey, kid: String) {
        let raw = key.rawRepresentation
        self.init(
            kid: kid, x: Base64URL.encode(raw.prefix(32)), y: Base64URL.encode(raw.suffix(32))
        )
    }
}
