import Crypto
import Foundation
import JWTKit
import TwofoldAPI

/// Signs and verifies access tokens (ES256 JWTs) and publishes the public keys as a JWKS.
///
/// The current key signs; retired keys (kept in the data folder until every token they signed
/// has expired) still verify and stay in the JWKS.
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
    /// `GET /.well-known/jwks.json`, prepared once.
    let jwks: JWKSDocument

    init(current: P256.Signing.PrivateKey, retired: [P256.Signing.PublicKey]) async throws {
        let keys = JWTKeyCollection()
        let currentKeyID = Self.keyID(for: current.publicKey)
        await keys.add(ecdsa: try ES256PrivateKey(backing: current), kid: JWKIdentifier(string: currentKeyID))
        var published = [JWKSDocument.Key(current.publicKey, kid: currentKeyID)]
        for key in retired {
            let kid = Self.keyID(for: key)
            await keys.add(ecdsa: try ES256PublicKey(backing: key), kid: JWKIdentifier(string: kid))
            published.append(JWKSDocument.Key(key, kid: kid))
        }
        self.keys = keys
        self.currentKeyID = currentKeyID
        self.signingKey = current
        self.encodedHeader = Data(#"{"alg":"ES256","kid":"\#(currentKeyID)","typ":"JWT"}"#.utf8)
            .base64URLEncodedString()
        self.jwks = JWKSDocument(keys: published)
    }

    /// RFC 7638 thumbprint of the public JWK, base64url: stable, and names the key without a registry.
    static func keyID(for key: P256.Signing.PublicKey) -> String {
        let jwk = JWKSDocument.Key(key, kid: "")
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
    func verify(_ token: String, now: Date) async -> AccessTokenClaims? {
        guard let claims = try? await keys.verify(token, as: AccessTokenClaims.self) else { return nil }
        guard claims.exp.value > now else { return nil }
        return claims
    }
}

/// A JSON Web Key Set of P-256 public keys (RFC 7517).
struct JWKSDocument: Codable, Sendable {
    struct Key: Codable, Sendable {
        var kty = "EC"
        var crv = "P-256"
        var alg = "ES256"
        var use = "sig"
        var kid: String
        var x: String
        var y: String

        init(_ key: P256.Signing.PublicKey, kid: String) {
            let raw = key.rawRepresentation
            self.kid = kid
            self.x = Data(raw.prefix(32)).base64URLEncodedString()
            self.y = Data(raw.suffix(32)).base64URLEncodedString()
        }
    }

    var keys: [Key]
}
