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
}
