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
    // Safe: the fields are set once in `init`.
    public let port: Int
    public let security: String
    public let directory: URL
    /// The certificate to trust (`TWOFOLD_SMTP_CA_FILE`), for `starttls` and `tls`.
    public let certificate: URL
    private let script: ScriptProcess

    public struct Message: Decodable, Sendable {
        public let mailFrom: String
        public let recipients: [String]
        public let data: String
        public let tls: Bool
        public let user: String?

        enum CodingKeys: String, CodingKey {
            case mailFrom = "mail_from"
            case recipients = "rcpt_tos"
            case data, tls, user
        }
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
        if security != "none" { try TestCertificate.make(certificate: certificate, key: key) }
        self.port = port ?? Self.freePort()
        var arguments = [
            BuildProducts.repositoryRoot.appendingPathComponent("scripts/smtp_sink.py").path,
            "--port", String(self.port), "--outdir", outbox.path, "--security", security,
            "--cert", certificate.path, "--key", key.path,
        ]
        if let username, let password { arguments += ["--username", username, "--password", password] }
        if loginOnly { arguments.append("--login-only") }
        script = try ScriptProcess(python: python, arguments: arguments)
    }

    /// The messages received so far, in order.
    public func messages() throws -> [Message] {
        try ScriptProcess.records(in: directory.appendingPathComponent("messages"))
    }

    /// Waits up to `seconds` for at least `count` messages.
    public func waitForMessages(_ count: Int, seconds: Double = 30) async throws -> [Message] {
        try await poll(seconds: seconds, messages) { $0.count >= count }
    }

    public func stop() { script.stop() }

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

/// A stand-in SMS gateway (`scripts/sms_gateway.py`) on a free loopback port that accepts only
/// requests carrying the right `X-Twofold-Signature`.
public final class SMSGateway: @unchecked Sendable {
    // Safe: the fields are set once in `init`.
    public let port: Int
    public let secret: String
    /// Where the gateway writes each message it accepts (`NNNN.json`).
    public let directory: URL
    private let script: ScriptProcess

    public struct Message: Decodable, Sendable {
        public let to: String
        public let message: String
        /// The 6-digit code in the text.
        public var code: String? { oneTimeCode(in: message) }
    }

    public init(python: ExternalTool, port: Int, secret: String) throws {
        self.port = port
        self.secret = secret
        directory = try BuildProducts.temporaryDirectory("sms-gateway")
        script = try ScriptProcess(
            python: python,
            arguments: [
                BuildProducts.repositoryRoot.appendingPathComponent("scripts/sms_gateway.py").path, "--port",
                String(port), "--outdir", directory.path, "--secret", secret,
            ])
    }

    public func messages() throws -> [Message] { try ScriptProcess.records(in: directory) }

    /// Waits up to `seconds` for at least `count` messages.
    public func waitForMessages(_ count: Int, seconds: Double = 30) async throws -> [Message] {
        try await poll(seconds: seconds, messages) { $0.count >= count }
    }

    /// Waits up to `seconds` for a message after the first `count` that `matches` (by default,
    /// one carrying a code: notices of added factors arrive between codes); `nil` if none came.
    public func nextMessage(
        after count: Int, seconds: Double = 30, where matches: (Message) -> Bool = { $0.code != nil }
    ) async throws -> Message? {
        try await poll(seconds: seconds, messages) { $0.dropFirst(count).contains(where: matches) }
            .dropFirst(count).first(where: matches)
    }

    public func stop() { script.stop() }
}

/// A fresh self-signed certificate for `localhost` and 127.0.0.1 (openssl), P-256, for two days.
public enum TestCertificate {
    public static func make(certificate: URL, key: URL) throws {
        let openssl = try #require(ExternalTool.find("openssl", package: "openssl"))
        let made = try openssl.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        try #require(made.status == 0, "openssl: \(made.errorText)")
    }
}

/// A Python test helper that prints "ready" once it listens and runs until its standard input closes.
final class ScriptProcess: @unchecked Sendable {
    // Safe: set once in `init`, stopped once.
    private let process: ChildProcess

    init(python: ExternalTool, arguments: [String]) throws {
        process = try ChildProcess(python.url, arguments: arguments, input: .pipe, output: .pipe)
        let line = process.standardOutput!.readData(ofLength: 6)
        try #require(String(decoding: line, as: UTF8.self).hasPrefix("ready"), "\(arguments[0]) did not start")
    }

    func stop() {
        try? process.standardInput?.close()
        process.terminate()
        process.waitUntilExit()
    }

    /// The JSON files the script wrote to `folder`, in order.
    static func records<T: Decodable>(in folder: URL) throws -> [T] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
            .map { try JSONDecoder().decode(T.self, from: Data(contentsOf: folder.appendingPathComponent($0))) }
    }
}

/// The first 6-digit code in a message text.
public func oneTimeCode(in text: String) -> String? {
    let words: [Substring] = text.split(separator: " " as Character)
    return words.first { $0.count >= 6 && $0.prefix(6).allSatisfy(\.isNumber) }.map { String($0.prefix(6)) }
}

/// Polls `read` until `done` holds or `seconds` pass; returns the last reading.
public func poll<T>(seconds: Double = 30, _ read: () throws -> T, until done: (T) -> Bool) async throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        let value = try read()
        if done(value) || Date() > deadline { return value }
        try await Task.sleep(for: .milliseconds(100))
    }
}

/// A TCP relay on a local port to another address (`scripts/tcp_relay.py`): stopping it cuts the
/// connections through it, as a database server going away would.
public final class TCPRelay: @unchecked Sendable {
    // Safe: set once in `init`, stopped once.
    public let port: Int
    private let script: ScriptProcess

    public init(python: ExternalTool, port: Int, target: String) throws {
        self.port = port
        script = try ScriptProcess(
            python: python,
            arguments: [
                BuildProducts.repositoryRoot.appendingPathComponent("scripts/tcp_relay.py").path, "--port",
                String(port), "--target", target,
            ])
    }

    public func stop() { script.stop() }
}
