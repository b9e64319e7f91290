import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's data folder: the SQLite database and the keys, readable by the owner only.
///
/// Created on first start (mode 0700). Keys are generated once and kept: a P-256 key that signs
/// access tokens (`signing-key.pem`) and a 256-bit key that encrypts secrets at rest
/// (`encryption.key`), each mode 0600. Files found with wider permissions are narrowed.
public struct DataDirectory: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    public var signingKeyURL: URL { url.appendingPathComponent("signing-key.pem") }
    public var encryptionKeyURL: URL { url.appendingPathComponent("encryption.key") }

    /// Creates the folder if needed and restricts it to its owner.
    public func prepare() throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw DataDirectoryError.notADirectory(url.path) }
        } else {
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
        }
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
    }

    /// The token-signing key, generated on first use.
    public func signingKey() throws -> P256.Signing.PrivateKey {
        if let pem = try readOwnerOnly(signingKeyURL) {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
        }
        let key = P256.Signing.PrivateKey()
        try writeOwnerOnly(Data(key.pemRepresentation.utf8), to: signingKeyURL)
        return key
    }

    public var retiredKeysURL: URL { url.appendingPathComponent("retired-signing-keys") }

    /// Signing keys retired after `since`, with when each was retired: their tokens may still be
    /// live, so they keep verifying those (`TokenService`). Only public halves are kept (issue S
    /// item 6): a retired private key on disk could sign new tokens. A file from before that rule
    /// holding a private key is rewritten as its public key. Older retired keys are deleted.
    public func retiredSigningKeys(since: Date) throws -> [RetiredSigningKey] {
        let manager = FileManager.default
        guard manager.fileExists(atPath: retiredKeysURL.path) else { return [] }
        var keys: [RetiredSigningKey] = []
        for name in try manager.contentsOfDirectory(atPath: retiredKeysURL.path).sorted() where name.hasSuffix(".pem") {
            let file = retiredKeysURL.appendingPathComponent(name)
            guard let retiredAt = TimeInterval(name.dropLast(4).prefix(while: { $0 != "-" })) else { continue }
            if retiredAt < since.timeIntervalSince1970 {
                try manager.removeItem(at: file)
                continue
            }
            let pem = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            let key: P256.Signing.PublicKey
            if let publicKey = try? P256.Signing.PublicKey(pemRepresentation: pem) {
                key = publicKey
            } else {
                key = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
                try manager.removeItem(at: file)
                try writeOwnerOnly(Data(key.pemRepresentation.utf8), to: file)
            }
            keys.append(RetiredSigningKey(key: key, retiredAt: Date(timeIntervalSince1970: retiredAt)))
        }
        return keys
    }

    /// Retires the current signing key (its public half keeps verifying the tokens it signed
    /// until they expire) and makes a new one current. Servers pick the change up when they
    /// restart.
    public func rotateSigningKey(now: Date) throws {
        let manager = FileManager.default
        if !manager.fileExists(atPath: retiredKeysURL.path) {
            try manager.createDirectory(at: retiredKeysURL, withIntermediateDirectories: true)
            try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: retiredKeysURL.path)
        }
        if let current = try readOwnerOnly(signingKeyURL) {
            let key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: current, as: UTF8.self))
            let name = "\(Int(now.timeIntervalSince1970))-\(UUID().uuidString.prefix(8)).pem"
            try writeOwnerOnly(
                Data(key.publicKey.pemRepresentation.utf8), to: retiredKeysURL.appendingPathComponent(name))
            try manager.removeItem(at: signingKeyURL)
        }
        _ = try signingKey()
    }

    /// The key that encrypts secrets at rest, generated on first use.
    public func encryptionKey() throws -> SymmetricKey {
        if let data = try readOwnerOnly(encryptionKeyURL) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
                throw DataDirectoryError.corruptKey(encryptionKeyURL.path)
            }
            return SymmetricKey(data: bytes)
        }
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        try writeOwnerOnly(Data(text.utf8), to: encryptionKeyURL)
        return key
    }

    private func readOwnerOnly(_ file: URL) throws -> Data? {
        let manager = FileManager.default
        guard manager.fileExists(atPath: file.path) else { return nil }
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return try Data(contentsOf: file)
    }

    private func writeOwnerOnly(_ data: Data, to file: URL) throws {
        // open(2) with O_EXCL and mode 0600: the key is never readable by others, not even
        // briefly, and an existing file is never overwritten.
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw DataDirectoryError.cannotWrite(file.path) }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(descriptor) == 0 else {
            throw DataDirectoryError.cannotWrite(file.path)
        }
    }
}

/// The public half of a retired token-signing key and when it was retired.
public struct RetiredSigningKey: Sendable {
    public let key: P256.Signing.PublicKey
    public let retiredAt: Date
}

/// Why the data folder could not be used.
public enum DataDirectoryError: Error, CustomStringConvertible {
    case notADirectory(String)
    case cannotWrite(String)
    case corruptKey(String)

    public var description: String {
        switch self {
        case .notADirectory(let path): return "data folder: \(path) exists and is not a folder (TWOFOLD_DATA_DIR)"
        case .cannotWrite(let path): return "data folder: cannot write \(path)"
        case .corruptKey(let path): return "data folder: \(path) does not hold a base64 256-bit key"
        }
    }
}
