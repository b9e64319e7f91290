import Foundation
import Testing
import TwofoldAPI
import TwofoldClient

/// The offline queue's file: kept between launches, the owner's alone, and refused when others
/// may have written it (its changes would be sent with this user's tokens).
@Suite struct ChangeQueueFileTests {
    static func change() -> QueuedChange {
        QueuedChange(
            id: UUID(), method: .post, template: "api/v1/2fa/totp/setup", value: nil, body: Data("{}".utf8),
            idempotencyKey: "twofold-key", madeAt: Date(timeIntervalSince1970: 1_900_000_000), userID: UUID())
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func changesSurviveANewStoreOnTheSameFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("queue.json")
        #expect(try FileChangeQueueStore(file: file).load().isEmpty, "no file yet is an empty queue")
        let changes = [Self.change(), Self.change()]
        try FileChangeQueueStore(file: file).save(changes)
        #expect(try FileChangeQueueStore(file: file).load() == changes)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aFileOthersMayWriteIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("queue.json")
        try FileChangeQueueStore(file: file).save([Self.change()])
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: file.path)
        #expect(throws: PrivateFile.NotPrivate.self) { try FileChangeQueueStore(file: file).load() }
    }

    @Test func aLinkOrAFIFOInItsPlaceIsRefusedWithoutWaiting() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let elsewhere = folder.appendingPathComponent("someone-elses.json")
        try FileChangeQueueStore(file: elsewhere).save([Self.change()])
        let link = folder.appendingPathComponent("queue.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
        #expect(throws: PrivateFile.NotPrivate.self) { try FileChangeQueueStore(file: link).load() }
        let fifo = folder.appendingPathComponent("fifo.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: PrivateFile.NotPrivate.self) { try FileChangeQueueStore(file: fifo).load() }
    }

    @Test func aChangeWithASecretIsNotQueued() async throws {
        let session = SessionManager(
            client: APIClient(baseURL: URL(string: "http://twofold.test")!), store: MemoryTokenStore())
        let queue = OfflineQueue(session: session, store: MemoryChangeQueueStore())
        await #expect(throws: SecretNotQueued.self) {
            try await queue.enqueue(
                API.Account.changePassword, PasswordChangeRequest(currentPassword: "old one", newPassword: "new one"))
        }
        #expect(try await queue.waiting.isEmpty)
        #expect(!"\(Self.change())".contains("{}"), "a queued change prints without its body")
    }
}
