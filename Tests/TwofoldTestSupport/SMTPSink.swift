import Foundation
import Testing

/// The virtualenv's Python (PyJWT, aiosmtpd), which `scripts/test` creates; `nil` after recording
/// why when it is missing (unless `TWOFOLD_ALLOW_MISSING_TOOLS=1`).
public enum TestPython {
    public static func find(sourceLocation: SourceLocation = #_sourceLocation) -> ExternalTool? {
        if let path = ProcessInfo.processInfo.environment["TWOFOLD_PYTHON"], !path.isEmpty {
            return ExternalTool(url: URL(fileURLWithPath: path))
        }
        let venv = BuildProducts.repositoryRoot.appendingPathComponent(".venv/bin/python")
        if FileManager.default.isExecutableFile(atPath: venv.path) { return ExternalTool(url: venv) }
        if ProcessInfo.processInfo.environment["TWOFOLD_ALLOW_MISSING_TOOLS"] != "1" {
            Issue.record(
                "no .venv Python; scripts/test creates it with PyJWT and aiosmtpd", sourceLocation: sourceLocation)
        }
        return nil
    }
}

/// A real SMTP server (`scripts/smtp_sink.py`, aiosmtpd) on a free loopback port, with a fresh
/// self-signed certificate for `localhost` when it speaks TLS. Each accepted message is a JSON
/// file: envelope, raw data, whether the session was encrypted, who authenticated.
public final class SMTPSink: @unchecked Sendable {
    // Safe: the fields are set once in `init`; `process` is only stopped in `stop()`.
    public let port: Int
    public let security: String
    public let directory: URL
    /// The certificate to trust (`TWOFOLD_SMTP_CA_FILE`), for `starttls` and `tls`.
    public let certificate: URL
    private let process: Process
    private let input: Pipe

    public struct Message: Decodable, Sendable {
        public let mail_from: String
        public let rcpt_tos: [String]
        public let data: String
        public let tls: Bool
        public let user: String?
    }

    /// Starts the server; `port` defaults to a free one. With `username`, AUTH is required
    /// (PLAIN or LOGIN; only LOGIN with `loginOnly`).
    public init(
        python: ExternalTool, security: String, username: String? = nil, password: String? = nil,
        loginOnly: Bool = false, port: Int? = nil
    ) throws {
        self.security = security
        directory = try BuildProducts.temporaryDirectory("smtp-sink")
        let outbox = directory.appendingPathComponent("messages")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        if security != "none" {
            let openssl = try #require(ExternalTool.find("openssl", package: "openssl"))
            let made = try openssl.run([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ])
            try #require(made.status == 0, "openssl: \(made.errorText)")
        }
        self.port = port ?? Self.freePort()
        var arguments = [
            BuildProducts.repositoryRoot.appendingPathComponent("scripts/smtp_sink.py").path,
            "--port", String(self.port), "--outdir", outbox.path, "--security", security,
            "--cert", certificate.path, "--key", key.path,
        ]
        if let username, let password { arguments += ["--username", username, "--password", password] }
        if loginOnly { arguments.append("--login-only") }
        process = Process()
        process.executableURL = python.url
        process.arguments = arguments
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // The script prints "ready" once it listens.
        let line = output.fileHandleForReading.readData(ofLength: 6)
        try #require(String(decoding: line, as: UTF8.self).hasPrefix("ready"), "the SMTP sink did not start")
    }

    /// The messages received so far, in order.
    public func messages() throws -> [Message] {
        let folder = directory.appendingPathComponent("messages")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
            .sorted().map {
                try JSONDecoder().decode(Message.self, from: Data(contentsOf: folder.appendingPathComponent($0)))
            }
    }

    /// Waits up to `seconds` for at least `count` messages.
    public func waitForMessages(_ count: Int, seconds: Double = 20) async throws -> [Message] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let received = try messages()
            if received.count >= count || Date() > deadline { return received }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    public func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    /// A loopback port that was free a moment ago.
    public static func freePort() -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length)
                return getsockname(socket, $0, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
