import Foundation
import Testing

/// A program the tests drive from outside (`zbarimg`, `rsvg-convert`, `oathtool`, the built
/// binaries). `scripts/test` installs the Debian packages; when one is missing the test fails,
/// unless `TWOFOLD_ALLOW_MISSING_TOOLS=1` says to skip on this machine.
public struct ExternalTool: Sendable {
    public let url: URL

    /// The named program on `PATH`, or `nil` after recording why it is needed.
    public static func find(_ name: String, package: String, sourceLocation: SourceLocation = #_sourceLocation)
        -> ExternalTool?
    {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return ExternalTool(url: candidate)
            }
        }
        if ProcessInfo.processInfo.environment["TWOFOLD_ALLOW_MISSING_TOOLS"] != "1" {
            Issue.record(
                "\(name) is not installed (Debian package \(package)); scripts/test installs it",
                sourceLocation: sourceLocation)
        }
        return nil
    }

    public init(url: URL) { self.url = url }

    /// What a finished run printed and returned.
    public struct Output: Sendable {
        public let status: Int32
        public let standardOutput: Data
        public let standardError: Data
        public var text: String { String(decoding: standardOutput, as: UTF8.self) }
        public var errorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// Runs the tool to completion; `input`, when given, is its standard input.
    public func run(_ arguments: [String], environment: [String: String]? = nil, input: Data? = nil) throws -> Output {
        let process = try ChildProcess(
            url, arguments: arguments, environment: environment, input: input == nil ? .null : .pipe, output: .pipe,
            error: .pipe)
        if let input, let pipe = process.standardInput {
            pipe.write(input)
            try pipe.close()
        }
        // Read both pipes to the end before waiting, so a chatty tool cannot block on a full pipe.
        let errorData = ReadBox()
        let reader = Thread { errorData.data = process.standardError!.readDataToEndOfFile() }
        reader.start()
        let outputData = process.standardOutput!.readDataToEndOfFile()
        let status = process.waitUntilExit()
        while !errorData.done { usleep(1_000) }
        return Output(status: status, standardOutput: outputData, standardError: errorData.data)
    }
}

private final class ReadBox: @unchecked Sendable {
    // Safe: written once by the reader thread, read after `done` is seen.
    private let lock = NSLock()
    private var value = Data()
    private var finished = false

    var data: Data {
        get { lock.withLock { value } }
        set {
            lock.withLock {
                value = newValue
                finished = true
            }
        }
    }

    var done: Bool { lock.withLock { finished } }
}

/// Where the package's built products live: `TWOFOLD_BIN_DIR`, or `.build/debug` beside
/// `Package.swift`.
public enum BuildProducts {
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    public static func executable(_ name: String) -> URL {
        if let directory = ProcessInfo.processInfo.environment["TWOFOLD_BIN_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory).appendingPathComponent(name)
        }
        return repositoryRoot.appendingPathComponent(".build/debug").appendingPathComponent(name)
    }

    /// A fresh empty folder under the system's temporary directory.
    public static func temporaryDirectory(_ prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
