import Foundation
import Testing
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
    /// The server's clock (`TWOFOLD_TEST_CLOCK_FILE`): how far it runs ahead of the real one.
    let clockFile: URL
    private let ahead = NSLock()
    private var secondsAhead: TimeInterval = 0
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// A client of this server, on the shared ephemeral session.
    var client: APIClient { APIClient(baseURL: baseURL) }

    /// Starts the server on a free port and waits until `/healthz` answers. A port another
    /// process took between choosing and binding it is chosen again.
    init(dataDirectory: URL, environment extra: [String: String] = [:]) async throws {
        self.dataDirectory = dataDirectory
        clockFile = dataDirectory.deletingLastPathComponent().appendingPathComponent(
            "clock-\(UUID().uuidString.prefix(8))")
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
        // Production refuses a movable clock: a test of production mode runs on the real one.
        if extra["TWOFOLD_ENV"] != "production" { environment["TWOFOLD_TEST_CLOCK_FILE"] = clockFile.path }
        // bcrypt's lowest cost: at the default (12) each password check takes most of a second of
        // CPU in a debug build, which the suite's hundreds of sign-ins paid for nothing. The test
        // of logins hashing in parallel asks for the default.
        environment["TWOFOLD_BCRYPT_COST"] = "4"
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
            if (try? await client.send(API.Operations.health)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ServerProcessError.neverHealthy(log: log)
    }

    /// Moves the server's clock `seconds` ahead (a cooldown passes, a proof goes stale) instead of
    /// waiting for it. The server reads the clock file on every reading of its clock.
    func advanceClock(by seconds: TimeInterval) throws {
        let total = ahead.withLock {
            secondsAhead += seconds
            return secondsAhead
        }
        try Data(String(total).utf8).write(to: clockFile, options: .atomic)
    }

    /// The server's time now.
    var now: Date { Date().addingTimeInterval(ahead.withLock { secondsAhead }) }

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

/// Requests the typed client would never make, for the tests whose point is the raw wire (a
/// malformed body, a method or path no endpoint has, a forged header): sent through
/// `TwofoldClient`'s transport, every status coming back as a value (`HTTPAnswer`). Every other
/// request goes through `APIClient`.
enum HTTP {
    static func send(_ request: URLRequest) async throws -> HTTPAnswer {
        try await URLSessionTransport().send(request)
    }

    static func request(
        _ method: String, _ url: URL, body: Data? = nil, contentType: String? = nil, headers: [String: String] = [:]
    ) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: Wire.Header.contentType) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }
}

/// The refusal `call` met: the server's `APIError`, or `nil` after recording an issue when the
/// call succeeded (or failed without an answer from the server).
func refusal<T>(sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> T) async -> APIError? {
    do {
        let answer = try await call()
        Issue.record("expected a refusal, the call succeeded: \(answer)", sourceLocation: sourceLocation)
    } catch let error as APIError {
        return error
    } catch {
        Issue.record(error, "expected a refusal from the server", sourceLocation: sourceLocation)
    }
    return nil
}

extension APIClient {
    /// Sends `body` to `endpoint` as `send` does, and gives back the answer as it came, whatever
    /// its status: for checks on the status, the headers or the exact text.
    func exchange<Body: Encodable, Answer>(
        _ endpoint: Endpoint<Body, Answer>, _ body: Body, bearer: String? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        try await exchange(
            endpoint.method, endpoint.url(relativeTo: baseURL), body: body, bearer: bearer, headers: headers)
    }

    /// Calls `endpoint`, which takes no body, and gives back the answer as it came.
    func exchange<Answer>(
        _ endpoint: Endpoint<NoContent, Answer>, bearer: String? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        try await exchange(
            endpoint.method, endpoint.url(relativeTo: baseURL), body: NoContent?.none, bearer: bearer,
            headers: headers)
    }
}

/// A sign-in that ended otherwise than a test expected.
struct UnexpectedLoginOutcome: Error, CustomStringConvertible {
    let description: String
}

extension LoginOutcome {
    /// The tokens of a sign-in the password alone completed; throws when a second step was asked.
    var tokens: AuthTokensResponse {
        get throws {
            guard case .signedIn(let tokens) = self else {
                throw UnexpectedLoginOutcome(description: "a second step was asked for, not expected here")
            }
            return tokens
        }
    }

    /// The second step a sign-in asked for; throws when the password alone signed in.
    var challenge: LoginChallengeResponse {
        get throws {
            guard case .secondStep(let challenge) = self else {
                throw UnexpectedLoginOutcome(description: "the password alone signed in; a second step was expected")
            }
            return challenge
        }
    }
}
