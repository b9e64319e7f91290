import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The built `twofold-server` binary running in a temporary data folder on a free port.
final class ServerProcess: @unchecked Sendable {
    // Safe: the process handle is only touched from the test that owns this object.
    private(set) var process: ChildProcess?
    private(set) var port: Int
    let dataDirectory: URL
    private(set) var logFile: URL
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts the server on a free port and waits until `/healthz` answers. A port another
    /// process took between choosing and binding it is chosen again.
    init(dataDirectory: URL, environment extra: [String: String] = [:]) async throws {
        self.dataDirectory = dataDirectory
        port = SMTPSink.freePort()
        logFile = dataDirectory.deletingLastPathComponent().appendingPathComponent("server-\(port).log")
        for attempt in 1...5 {
            do {
                try await start(environment: extra)
                return
            } catch ServerProcessError.exited(let status, let log) where log.contains("Address already in use") {
                guard attempt < 5 else { throw ServerProcessError.exited(status: status, log: log) }
                port = SMTPSink.freePort()
                logFile = dataDirectory.deletingLastPathComponent().appendingPathComponent("server-\(port).log")
            }
        }
    }

    private func start(environment extra: [String: String]) async throws {
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TWOFOLD_") }
        environment["DATABASE_URL"] = nil
        environment["TWOFOLD_DATA_DIR"] = dataDirectory.path
        environment["TWOFOLD_PORT"] = String(port)
        environment.merge(extra) { $1 }
        process = try ChildProcess(
            BuildProducts.executable("twofold-server"), arguments: [], environment: environment,
            output: .file(logFile), error: .file(logFile))
        try await waitUntilHealthy()
    }

    private func waitUntilHealthy() async throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let process, let status = process.terminationStatus {
                throw ServerProcessError.exited(status: status, log: log)
            }
            if let response = try? await HTTP.send(
                .init(url: baseURL.appendingPathComponent(API.Operations.health.path()))),
                response.status == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ServerProcessError.neverHealthy(log: log)
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Whether the server has not exited.
    var isRunning: Bool { process?.isRunning ?? false }

    func stop() {
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

enum ServerProcessError: Error {
    case exited(status: Int32, log: String)
    case neverHealthy(log: String)
}

/// Requests to the built server through `TwofoldClient`'s transport, the project's one HTTP
/// client: every status comes back as a value (`HTTPAnswer`). For the tests that send raw
/// wire shapes; typed calls go through `APIClient`.
enum HTTP {
    typealias Response = HTTPAnswer

    /// Sends on `session`; URLSession allows only a few connections per host, so a request that
    /// must not queue behind others gets a session of its own.
    static func send(_ request: URLRequest, session: URLSession = shared) async throws -> Response {
        try await URLSessionTransport(session: session).send(request)
    }

    static let shared = URLSessionTransport.ephemeral

    static let decoder = Wire.decoder()

    /// A JSON request, optionally with a bearer token.
    static func json(_ method: String, _ url: URL, _ body: [String: String]?, bearer: String? = nil) -> URLRequest {
        var request = self.request(
            method, url, body: body.flatMap { try? JSONSerialization.data(withJSONObject: $0) },
            contentType: body == nil ? nil : Wire.json)
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: Wire.Header.authorization) }
        return request
    }

    static func request(_ method: String, _ url: URL, body: Data? = nil, contentType: String? = nil) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: Wire.Header.contentType) }
        return request
    }
}
