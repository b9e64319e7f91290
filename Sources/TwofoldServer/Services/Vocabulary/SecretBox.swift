import Crypto
import Foundation

/// Encrypts secrets at rest with AES-256-GCM. The key lives outside the database (the data
/// folder's `encryption.key`, or `TWOFOLD_ENCRYPTION_KEY`); each ciphertext is bound to its
/// owner with associated data, so a row copied onto another user does not decrypt.
struct SecretBox: Sendable {
    let key: SymmetricKey

    func seal(_ secret: [UInt8], boundTo owner: UUID) throws -> String {
        let box = try AES.GCM.seal(secret, using: key, authenticating: Data(owner.canonicalText.utf8))
        guard let combined = box.combined else { throw SecretBoxError.cannotSeal }
        return combined.base64EncodedString()
    }

    func open(_ sealed: String, boundTo owner: UUID) throws -> [UInt8] {
        guard let data = Data(base64Encoded: sealed) else { throw SecretBoxError.corrupt }
        let box = try AES.GCM.SealedBox(combined: data)
        return Array(try AES.GCM.open(box, using: key, authenticating: Data(owner.canonicalText.utf8)))
    }

    /// A key derived for keyed lookups (HMAC), separate from the encryption key's own use.
    func lookupKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Data("twofold \(purpose)".utf8), outputByteCount: 32)
    }
}

enum SecretBoxError: Error {
    case cannotSeal
    case corrupt
}
