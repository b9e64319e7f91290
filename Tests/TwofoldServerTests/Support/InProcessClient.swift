import Foundation
import NIOCore
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's `APIClient` on the application in process: a server test calls the server as an
/// app does, with the endpoints' typed bodies and answers, through Vapor's in-memory testing
/// (no socket). Requests come from `address` (`X-Forwarded-For`: the test apps trust one proxy)
/// unless a request names its own.
struct InProcessTransport: Transport {
    let app: Application
    let address: String

    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw URLError(.badURL)
        }
        let path = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        var headers = HTTPHeaders((request.allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) })
        if !headers.contains(name: "X-Forwarded-For") { headers.add(name: "X-Forwarded-For", value: address) }
        var answer: HTTPAnswer?
        try await app.raw(
            HTTPMethod(rawValue: request.httpMethod ?? "GET"), path, headers: headers,
            body: request.httpBody.map { ByteBuffer(data: $0) }
        ) { response in
            answer = HTTPAnswer(
                status: Int(response.status.code),
                headers: Dictionary(response.headers.map { ($0.name, $0.value) }) { first, _ in first },
                body: Data(buffer: response.body))
        }
        guard let answer else { throw URLError(.badServerResponse) }
        return answer
    }
}

extension Application {
    /// A typed client of this application in process, its requests from `address`.
    func client(from address: String = "10.0.0.1") -> APIClient {
        APIClient(
            baseURL: URL(string: "http://localhost")!, transport: InProcessTransport(app: self, address: address))
    }
}

/// A call the test expected the server to refuse answered with a success.
struct NotRefused: Error, CustomStringConvertible {
    let description = "the server answered with a success where the test expected a refusal"
}

/// The server's refusal of `call` (its status, its problem document, `Retry-After`): the test
/// fails when the call succeeds; any other error is thrown on.
func refusal<T>(
    _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> T
) async throws -> APIError {
    do {
        _ = try await call()
    } catch let error as APIError {
        return error
    }
    Issue.record(comment ?? "expected a refusal", sourceLocation: sourceLocation)
    throw NotRefused()
}

/// The status `call` was answered with: 200 for a success (the tests of parallel claims count
/// successes and refusals), the refusal's status otherwise.
func status<T>(_ call: () async throws -> T) async throws -> Int {
    do {
        _ = try await call()
        return 200
    } catch let error as APIError {
        return error.status
    }
}

extension Application {
    /// A request the typed client cannot make, sent as given: malformed bytes, a body without a
    /// field its type requires, a path or method no endpoint has, a page and its form. Every
    /// request of the server tests that does not go through `client(from:)` goes through here
    /// (`TestLayoutTests` holds it).
    func raw(
        _ method: HTTPMethod, _ path: String, headers: HTTPHeaders = [:], body: ByteBuffer? = nil,
        _ check: (TestingHTTPResponse) async throws -> Void
    ) async throws {
        try await testing().test(method, path, headers: headers, body: body, afterResponse: check)
    }
}
