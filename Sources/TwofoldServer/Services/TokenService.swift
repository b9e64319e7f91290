import Crypto
import Foundation
import JWTKit
import TwofoldAPI

/// Signs and verifies access tokens (ES256 JWTs) and publishes the public keys as a JWKS.
///
/// The current key signs; a retired key (its public half, kept in the data folder until every
/// token it signed has expired) verifies only tokens issued before it was retired, and leaves the
/// JWKS once those have all expired (issue S item 6).
struct TokenService: Sendable {
    static let accessTokenLifetime: TimeInterval = 15 * 60

    /// Verification (every key, current and retired).
    let keys: JWTKeyCollection
    let currentKeyID: String
    /// Signing is done here, not by `keys`: it is an actor, and every sign-in would hop to it
    /// and back in the middle of its database work.
    private let signingKey: P256.Signing.PrivateKey
    /// The encoded JOSE header of every token the current key signs.
    private let encodedHeader: String
    /// The current key's JWK, then each retired key's with the time it was retired.
    private let currentJWK: JSONWebKeySet.Key
    private let retired: [String: (jwk: JSONWebKeySet.Key, retiredAt: Date)]

    init(current: P256.Signing.PrivateKey, retired: [RetiredSigningKey]) async throws {
        let keys = JWTKeyCollection()
        let currentKeyID = Self.keyID(for: current.publicKey)
        await keys.add(ecdsa: try ES256PrivateKey(backing: current), kid: JWKIdentifier(string: currentKeyID))
        var retiredKeys: [String: (jwk: JSONWebKeySet.Key, retiredAt: Date)] = [:]
        for retiredKey in retired {
            let kid = Self.keyID(for: retiredKey.key)
            guard kid != currentKeyID else { continue }
            await keys.add(ecdsa: try ES256PublicKey(backing: retiredKey.key), kid: JWKIdentifier(string: kid))
            retiredKeys[kid] = (JSONWebKeySet.Key(retiredKey.key, kid: kid), retiredKey.retiredAt)
        }
        self.keys = keys
        self.currentKeyID = currentKeyID
        self.signingKey = current
        self.encodedHeader = Data(#"{"alg":"ES256","kid":"\#(currentKeyID)","typ":"JWT"}"#.utf8)
            .base64URLEncodedString()
        self.currentJWK = JSONWebKeySet.Key(current.publicKey, kid: currentKeyID)
        self.retired = retiredKeys
    }

    /// `GET /.well-known/jwks.json` at `now`: the current key, and each retired key while a
    /// token it signed before its retirement may be unexpired.
    func jwks(now: Date) -> JSONWebKeySet {
        let live = retired.values.filter { $0.retiredAt.addingTimeInterval(Self.accessTokenLifetime) > now }
            .sorted { $0.retiredAt > $1.retiredAt }.map(\.jwk)
        return JSONWebKeySet(keys: [currentJWK] + live)
    }

    /// RFC 7638 thumbprint of the public JWK, base64url: stable, and names the key without a registry.
    static func keyID(for key: P256.Signing.PublicKey) -> String {
        let jwk = JSONWebKeySet.Key(key, kid: "")
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"}"#
        return Data(SHA256.hash(data: Data(canonical.utf8))).base64URLEncodedString()
    }

    func issue(userID: UUID, sessionID: UUID, methods: [String], authTime: Date, now: Date) throws -> TokenDTO {
        // Whole seconds: NumericDate values that every verifier reads as integers.
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expiresAt = now.addingTimeInterval(Self.accessTokenLifetime)
        let claims = AccessTokenClaims(
            sub: .init(value: userID.canonicalText), sid: sessionID.canonicalText, amr: methods,
            authTime: Int(authTime.timeIntervalSince1970), iat: .init(value: now), exp: .init(value: expiresAt),
            iss: .init(value: AccessTokenClaims.issuer))
        return TokenDTO(token: try sign(claims), expiresAt: expiresAt)
    }

    /// RFC 7515 compact JWS with ES256 (RFC 7518 §3.4: the signature is R and S, 32 bytes each);
    /// NumericDate claims in whole seconds, as JWTKit writes them.
    func sign(_ claims: AccessTokenClaims) throws -> String {
        let signingInput = encodedHeader + "." + claims.json.utf8.base64URLEncodedString()
        // Hashed straight from the string's bytes (Swift strings are contiguous UTF-8): through
        // `Data` and the generic `DataProtocol` path the hash cost as much again.
        var hasher = SHA256()
        var signingBytes = signingInput
        signingBytes.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        let signature = try signingKey.signature(for: hasher.finalize())
        return signingInput + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    /// The claims of a token signed by one of our keys, not expired at `now`; `nil` otherwise.
    /// No token lives longer than an access token does, and a retired key's only if it was
    /// issued before the key retired (both times are whole seconds, so a token from the second
    /// of the retirement counts as before it).
    func verify(_ token: String, now: Date) async -> AccessTokenClaims? {
        guard let claims = try? await keys.verify(token, as: AccessTokenClaims.self) else { return nil }
        guard claims.exp.value > now,
            claims.exp.value.timeIntervalSince(claims.iat.value) <= Self.accessTokenLifetime
        else { return nil }
        if let kid = Self.keyID(ofToken: token), let retiredKey = retired[kid] {
            guard claims.iat.value <= retiredKey.retiredAt else { return nil }
        }
        return claims
    }

    private static func base64(fromBase64URL text: Substring) -> String {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return base64
    }

    /// The `kid` of a compact JWS's header (already verified by the caller's key lookup).
    static func keyID(ofToken token: String) -> String? {
        guard let header = token.split(separator: ".", maxSplits: 1).first,
            let data = Data(base64Encoded: Self.base64(fromBase64URL: header)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }
}

extension JSONWebKeySet.Key {
    init(_ key: P256.Signing.PublicKey, kid: String) {
        let raw = key.rawRepresentation
        self.init(
            kid: kid, x: Data(raw.prefix(32)).base64URLEncodedString(), y: Data(raw.suffix(32)).base64URLEncodedString()
        )
    }
}
