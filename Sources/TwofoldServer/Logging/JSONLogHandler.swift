import Foundation
import Logging

/// One JSON object per log line (`TWOFOLD_LOG_FORMAT=json`), for log collectors:
/// `{"time":…,"level":…,"label":…,"message":…,"request-id":…}`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = "\(value)"
        }
        fields["time"] = Date().formatted(.iso8601)
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(fields) else { return }
        line.append(0x0A)
        LogOutput.standardOutput.write(line)
    }
}

/// Standard output for log lines, one writer at a time, so concurrent lines never interleave.
final class LogOutput: @unchecked Sendable {
    static let standardOutput = LogOutput()

    // Safe: every access to the file handle happens under `lock`.
    private let lock = NSLock()

    func write(_ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardOutput.write(data)
    }
}
