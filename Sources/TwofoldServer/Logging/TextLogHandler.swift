import Foundation
import Logging

/// Plain log lines (`TWOFOLD_LOG_FORMAT=text`, the default), as swift-log's `StreamLogHandler`
/// writes them: `2026-11-23T06:28:03+0000 info codes.vapor.application: request-id=… [Vapor] GET /healthz`.
///
/// Unlike `StreamLogHandler`, which puts a logger's metadata into words whenever it changes, this
/// does so only for a line it writes: every request sets its id on its logger, and at the usual
/// levels most requests write no line at all.
struct TextLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    private let write: @Sendable (String) -> Void

    init(label: String, write: @escaping @Sendable (String) -> Void = { LogOutput.standardOutput.write(Data($0.utf8)) })
    {
        self.label = label
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = "\(Self.timestamp()) \(event.level)\(label.isEmpty ? "" : " ")\(label):"
        // Every part from outside is escaped, so no value can end the line early (issue S item 10).
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(LogText.escaped(key))=\(LogText.escaped("\(value)"))"
        }
        line += " [\(event.source)] \(LogText.escaped("\(event.message)"))\n"
        write(line)
    }

    /// Local time to the second, with the offset from UTC.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let written = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(written).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
