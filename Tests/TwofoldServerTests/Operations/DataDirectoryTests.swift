import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

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

/// `sqlite::memory:`: a throwaway database that takes the kept file's path through the server.
@Suite struct ThrowawayDatabaseTests {
    @Test func itIsAnOwnerOnlyFileInATemporaryFolderRemovedAtShutdown() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-throwaway")
        defer { try? FileManager.default.removeItem(at: root) }
        let configuration = Configuration(
            dataDirectory: root.appendingPathComponent("data"), database: .sqliteInMemory, bcryptCost: 4,
            runsBackgroundJobs: false)
        var folder: URL?
        try await withApp { app in
            try await configure(app, with: configuration)
            try await app.autoMigrate()
            let file = try #require(app.twofold.sqlite?.path, "the direct SQLite connection of a file")
            let made = URL(fileURLWithPath: file).deletingLastPathComponent()
            folder = made
            #expect(
                made.deletingLastPathComponent().standardizedFileURL.path
                    == FileManager.default.temporaryDirectory.standardizedFileURL.path)
            let mode = try FileManager.default.attributesOfItem(atPath: made.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o700)
            // A 201: the registration's success.
            _ = try await app.client().send(
                API.Auth.register,
                RegisterRequest(username: "tia", email: "tia@example.com", password: "a long passphrase here"))
        }
        let removed = try #require(folder)
        #expect(!FileManager.default.fileExists(atPath: removed.path), "removed at shutdown")
    }
}
