import Crypto
import Foundation
import Testing
import TwofoldServer
import TwofoldTestSupport

@Suite struct DataDirectoryTests {
    func permissions(_ url: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func keysAreGeneratedOnceOwnerOnlyAndKept() throws {
        let root = try BuildProducts.temporaryDirectory("twofold-keys")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = DataDirectory(url: root.appendingPathComponent("data"))
        try directory.prepare()
        let signing = try directory.signingKey()
        let encryption = try directory.encryptionKey()

        #expect(try permissions(directory.url) == 0o700)
        #expect(try permissions(directory.signingKeyURL) == 0o600)
        #expect(try permissions(directory.encryptionKeyURL) == 0o600)

        // A second start reads the same keys back.
        #expect(try directory.signingKey().publicKey.rawRepresentation == signing.publicKey.rawRepresentation)
        #expect(try directory.encryptionKey() == encryption)
    }

    @Test func widerPermissionsAreNarrowed() throws {
        let root = try BuildProducts.temporaryDirectory("twofold-keys")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = DataDirectory(url: root)
        try directory.prepare()
        _ = try directory.encryptionKey()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.encryptionKeyURL.path)
        _ = try directory.encryptionKey()
        #expect(try permissions(directory.encryptionKeyURL) == 0o600)
    }

    @Test func aCorruptKeyStopsStartUpWithAMessage() throws {
        let root = try BuildProducts.temporaryDirectory("twofold-keys")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = DataDirectory(url: root)
        try directory.prepare()
        try Data("not a key".utf8).write(to: directory.encryptionKeyURL)
        #expect(throws: DataDirectoryError.self) { try directory.encryptionKey() }
    }
}
