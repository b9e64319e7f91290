import Foundation

/// The development provider: writes each message to standard output, marked as a delivery, and
/// never through the logger (whose lines must not carry codes). Refused in production.
struct ConsoleProvider: MessageProvider {
    let name = "console"
    let write: @Sendable (String) -> Void

    init(write: @escaping @Sendable (String) -> Void = { text in FileHandle.standardOutput.write(Data(text.utf8)) }) {
        self.write = write
    }

    func deliver(_ message: OutgoingMessage) async throws {
        let subject = message.subject.isEmpty ? "" : " [\(message.subject)]"
        write(
            "=== twofold delivery (\(message.channel.rawValue) to \(message.destination))\(subject): \(message.body)\n")
    }
}

/// Stands in when a channel is switched off (`TWOFOLD_SMS_PROVIDER=disabled`): nothing is queued
/// for it, because its factor is not offered; should a message reach it, it fails loudly.
struct DisabledProvider: MessageProvider {
    let name = "disabled"

    func deliver(_ message: OutgoingMessage) async throws {
        throw DeliveryError("\(message.channel.rawValue) delivery is disabled on this server")
    }
}
