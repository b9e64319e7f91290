import Foundation
import TwofoldAPI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What came back for a request: the status, the headers and the body, as sent.
public struct HTTPAnswer: Sendable {
    /// The HTTP status code.
    public let status: Int
    /// The answer's headers, as the transport gave them.
    public let headers: [String: String]
    /// The answer's body, as sent.
    public let body: Data

    /// An answer with `status`, `headers` and `body`.
    public init(status: Int, headers: [String: String], body: Data) {
        (self.status, self.headers, self.body) = (status, headers, body)
    }

    /// The header named `name`, in any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body read as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

extension HTTPAnswer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status, the headers' names and the body's size: a header (`Set-Cookie`) or the body
    /// may carry a token, so neither is shown.
    public var description: String {
        "HTTPAnswer(status: \(status), headers: \(headers.keys.sorted()), body: \(body.count) bytes)"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self, children: ["status": status, "headers": headers.keys.sorted(), "body": "\(body.count) bytes"],
            displayStyle: .struct)
    }
}

/// How requests reach the server: `URLSessionTransport` for real, anything else in a test.
public protocol Transport: Sendable {
    /// Sends `request` and gives back whatever status came; throws only when no answer came
    /// (no connection, a timeout, a cancel).
    func send(_ request: URLRequest) async throws -> HTTPAnswer
}

/// The live transport: a `URLSession` (ephemeral by default: no cookies or caches kept).
public struct URLSessionTransport: Transport {
    /// The session every request is sent on.
    public let session: URLSession

    /// A transport on `session` (`ephemeral` unless given).
    public init(session: URLSession = URLSessionTransport.ephemeral) { self.session = session }

    /// An ephemeral session that allows many connections to one host (a client in a test may
    /// send dozens of requests at once).
    public static let ephemeral: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }()

    /// Sends `request` on the session; throws when no HTTP answer came, and `CancellationError`
    /// when the calling task was cancelled (before sending, or while waiting for the answer).
    public func send(_ request: URLRequest) async throws -> HTTPAnswer {
        try Task.checkCancellation()
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError where error.code == .cancelled && Task.isCancelled {
            // Cancelled because the calling task was; a cancel for another reason (a TLS
            // challenge refused) stays the URLError it is.
            throw CancellationError()
        }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        return HTTPAnswer(status: http.statusCode, headers: headers, body: data)
    }
}

/// One request the client sent, as an app's log shows it: the endpoint (its path template, never
/// a value, a header or a body, so never a token), what came back, and how long it took.
public struct RequestRecord: Sendable, Equatable, CustomStringConvertible {
    /// What came back.
    public enum Outcome: Sendable, Equatable {
        /// The server answered with this status.
        case answered(status: Int)
        /// No answer came: the kind of error (`URLError -1009`), never its text, which may hold
        /// the URL.
        case failed(String)
        /// The calling task was cancelled.
        case cancelled
    }

    /// The endpoint as `API` describes it (`POST /api/v1/auth/login`).
    public let endpoint: String
    /// What came back.
    public let outcome: Outcome
    /// How long it took.
    public let duration: Duration

    /// A request to `endpoint` and what came of it.
    public init(endpoint: String, outcome: Outcome, duration: Duration) {
        (self.endpoint, self.outcome, self.duration) = (endpoint, outcome, duration)
    }

    /// `POST /api/v1/auth/login → 200 in 41 ms`.
    public var description: String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let what =
            switch outcome {
            case .answered(let status): "\(status)"
            case .failed(let kind): "failed (\(kind))"
            case .cancelled: "cancelled"
            }
        return "\(endpoint) → \(what) in \(milliseconds) ms"
    }
}

/// Where an app's log takes the client's requests (an `os.Logger`, swift-log, a file): one
/// `RequestRecord` per request, with no token, body or header in it.
public protocol RequestLogging: Sendable {
    /// Called once per request, when its answer (or its failure) came.
    func log(_ record: RequestRecord)
}

/// A refusal from the server: its status and, when it sent one, its problem document (the
/// stable `code`, attempts left, when to retry, when a lockout ends).
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status the server refused with.
    public let status: Int
    /// The server's problem document, when it sent one that could be read.
    public let problem: Problem?
    /// `Retry-After`, when the answer had it.
    public let retryAfterHeader: Int?

    /// The problem's stable error code, when the server sent one.
    public var code: ErrorCode? { problem?.code }
    /// Tries left before a lockout, when the server said.
    public var attemptsRemaining: Int? { problem?.attemptsRemaining }
    /// Seconds to wait before trying again: the problem's `retryAfter`, or `Retry-After`.
    public var retryAfter: Int? { problem?.retryAfter ?? retryAfterHeader }
    /// When a lockout ends, when the server said.
    public var lockoutUntil: Date? { problem?.lockoutUntil }

    /// A refusal with `status`, the server's `problem` and its `Retry-After` seconds.
    public init(status: Int, problem: Problem?, retryAfterHeader: Int? = nil) {
        (self.status, self.problem, self.retryAfterHeader) = (status, problem, retryAfterHeader)
    }

    /// The status, with the problem's code and detail (or title) when there is one.
    public var description: String {
        guard let problem else { return "HTTP \(status)" }
        return "HTTP \(status) \(problem.code.rawValue): \(problem.detail ?? problem.title)"
    }
}

/// An answer the client could not read as the endpoint's declared answer.
public struct UnreadableAnswer: Error, Sendable, Equatable, CustomStringConvertible {
    /// The endpoint called, as it describes itself.
    public let endpoint: String
    /// The HTTP status of the answer.
    public let status: Int
    /// Why the body could not be decoded.
    public let reason: String
    /// The endpoint, the status and the reason, in one line.
    public var description: String { "\(endpoint) answered \(status), unreadable: \(reason)" }

    /// An answer of `endpoint` with `status` that could not be read, and why.
    public init(endpoint: String, status: Int, reason: String) {
        (self.endpoint, self.status, self.reason) = (endpoint, status, reason)
    }
}

/// A resource endpoint called with an empty value: a path segment cannot be empty (servers
/// drop it, and the request would reach another endpoint), so nothing is sent.
public struct MissingResource: Error, Sendable, Equatable, CustomStringConvertible {
    /// The endpoint that was not called.
    public let endpoint: String
    /// What was missing, naming the endpoint.
    public var description: String { "\(endpoint) needs a non-empty value for its parameter" }

    /// `endpoint` was called with an empty value.
    public init(endpoint: String) { self.endpoint = endpoint }
}

/// Sends any endpoint of `API` to a server and gives back its typed answer, or throws
/// `APIError` with the problem the server sent. Requests are built from the endpoint's
/// definition: its method, its path under `baseURL` (a parameter escaped once), the JSON body
/// written by `Wire.encoder()`, and the bearer token when given.
public struct APIClient: Sendable {
    /// The server's URL; each endpoint's path is resolved under it.
    public let baseURL: URL
    /// How requests reach the server.
    public let transport: any Transport
    /// Headers every request carries (a test's `X-Forwarded-For`, an app's `User-Agent`).
    public var headers: [String: String]
    /// Told of every request and what came of it, when set.
    public var logger: (any RequestLogging)?

    /// A client for the server at `baseURL`, sending through `transport` with `headers` on every
    /// request, each logged to `logger` when there is one.
    public init(
        baseURL: URL, transport: any Transport = URLSessionTransport(), headers: [String: String] = [:],
        logger: (any RequestLogging)? = nil
    ) {
        (self.baseURL, self.transport, self.headers, self.logger) = (baseURL, transport, headers, logger)
    }

    /// The server's origin: the scheme, host and port of `baseURL`, lowercased. What a token
    /// kept for this server is filed under.
    public var origin: String {
        var components = URLComponents()
        (components.scheme, components.host, components.port) =
            (baseURL.scheme?.lowercased(), baseURL.host?.lowercased(), baseURL.port)
        return components.string ?? baseURL.absoluteString
    }

    // MARK: Typed calls

    /// Sends `body` to `endpoint`; its answer.
    public func send<Body: Encodable, Answer: Decodable>(
        _ endpoint: Endpoint<Body, Answer>, _ body: Body, bearer: String? = nil, query: [URLQueryItem] = [],
        headers: [String: String] = [:]
    ) async throws -> Answer {
        let answer = try await perform(
            endpoint.description,
            request(
                endpoint.method, endpoint.url(relativeTo: baseURL, query: query), body: body, bearer: bearer,
                headers: headers))
        return try read(answer, of: endpoint)
    }

    /// Calls `endpoint`, which takes no body; its answer.
    public func send<Answer: Decodable>(
        _ endpoint: Endpoint<NoContent, Answer>, bearer: String? = nil, query: [URLQueryItem] = [],
        headers: [String: String] = [:]
    ) async throws -> Answer {
        let answer = try await perform(
            endpoint.description,
            request(
                endpoint.method, endpoint.url(relativeTo: baseURL, query: query), body: NoContent?.none,
                bearer: bearer, headers: headers))
        return try read(answer, of: endpoint)
    }

    /// Calls `endpoint`, which takes no body, with a typed query (`PageQuery`, `AuditQuery`).
    public func send<Answer: Decodable>(
        _ endpoint: Endpoint<NoContent, Answer>, bearer: String? = nil, query: some EndpointQuery,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        try await send(endpoint, bearer: bearer, query: query.items, headers: headers)
    }

    /// Sends `body` to `endpoint` for the resource `value`; its answer.
    public func send<Body: Encodable, Answer: Decodable>(
        _ endpoint: ResourceEndpoint<Body, Answer>, _ value: String, _ body: Body, bearer: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        guard !value.isEmpty else { throw MissingResource(endpoint: endpoint.description) }
        let answer = try await perform(
            endpoint.description,
            request(
                endpoint.method, endpoint.url(relativeTo: baseURL, value), body: body, bearer: bearer,
                headers: headers))
        return try read(answer, of: endpoint)
    }

    /// Calls `endpoint`, which takes no body, for the resource `value`; its answer.
    public func send<Answer: Decodable>(
        _ endpoint: ResourceEndpoint<NoContent, Answer>, _ value: String, bearer: String? = nil,
        query: [URLQueryItem] = [], headers: [String: String] = [:]
    ) async throws -> Answer {
        guard !value.isEmpty else { throw MissingResource(endpoint: endpoint.description) }
        let answer = try await perform(
            endpoint.description,
            request(
                endpoint.method, endpoint.url(relativeTo: baseURL, value, query: query), body: NoContent?.none,
                bearer: bearer, headers: headers))
        return try read(answer, of: endpoint)
    }

    /// Calls a text endpoint (`/metrics`, `/openapi.yaml`); its text.
    public func send(_ endpoint: Endpoint<NoContent, PlainText>, headers: [String: String] = [:]) async throws
        -> PlainText
    {
        let answer = try await perform(
            endpoint.description,
            request(
                endpoint.method, endpoint.url(relativeTo: baseURL), body: NoContent?.none, bearer: nil,
                headers: headers))
        guard endpoint.success.contains(answer.status) else { throw Self.refusal(answer) }
        return PlainText(answer.text)
    }

    // MARK: The exchange itself

    /// The request for `url`: the method, the JSON body (none for `nil` or `NoContent`), the
    /// bearer token and the headers.
    public func request(
        _ method: HTTPVerb, _ url: URL, body: (some Encodable)?, bearer: String?, headers: [String: String] = [:]
    ) throws -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.setValue(Wire.json, forHTTPHeaderField: "Accept")
        if let body, !(body is NoContent) {
            request.httpBody = try Wire.encoder().encode(body)
            request.setValue(Wire.json, forHTTPHeaderField: Wire.Header.contentType)
        }
        // Header names in any case are one header: the call's win over the client's, and the
        // bearer token given for this call over both.
        var merged: [String: (name: String, value: String)] = [:]
        for (name, value) in self.headers { merged[name.lowercased()] = (name, value) }
        for (name, value) in headers { merged[name.lowercased()] = (name, value) }
        if let bearer {
            merged[Wire.Header.authorization.lowercased()] = (Wire.Header.authorization, "Bearer \(bearer)")
        }
        for (_, header) in merged { request.setValue(header.value, forHTTPHeaderField: header.name) }
        return request
    }

    /// Sends the request and gives back the answer as it came, whatever its status.
    public func exchange(
        _ method: HTTPVerb, _ url: URL, body: (some Encodable)?, bearer: String?, headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        try await perform(Self.label(method, url), request(method, url, body: body, bearer: bearer, headers: headers))
    }

    /// Sends `body` (raw bytes, JSON or not) to an endpoint known only by its erased
    /// definition, `value` in its parameter: for checks that walk every endpoint of `API`.
    public func exchange(
        _ endpoint: AnyEndpoint, _ value: String? = nil, body: Data?, bearer: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        var request = try request(
            endpoint.method, endpoint.url(relativeTo: baseURL, value), body: NoContent?.none, bearer: bearer,
            headers: headers)
        if let body {
            request.httpBody = body
            request.setValue(Wire.json, forHTTPHeaderField: Wire.Header.contentType)
        }
        return try await perform(endpoint.description, request)
    }

    /// How a request built by hand is logged: the endpoint of `API` its method and path match,
    /// never the path's values; a path no endpoint has is "(unlisted)".
    static func label(_ method: HTTPVerb, _ url: URL) -> String {
        let segments = url.path.split(separator: "/").map(String.init)
        let endpoint = API.all.first { endpoint in
            let template = endpoint.template.split(separator: "/").map(String.init)
            guard endpoint.method == method, template.count <= segments.count else { return false }
            let tail = Array(segments.suffix(template.count))
            return zip(template, tail).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
        return endpoint.map(\.description) ?? "\(method.rawValue) (unlisted)"
    }

    /// Sends `request` through the transport, telling the logger (when there is one) what came
    /// of it under `label`, the endpoint's description.
    private func perform(_ label: String, _ request: URLRequest) async throws -> HTTPAnswer {
        guard let logger else { return try await transport.send(request) }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let answer = try await transport.send(request)
            logger.log(
                RequestRecord(
                    endpoint: label, outcome: .answered(status: answer.status), duration: start.duration(to: clock.now))
            )
            return answer
        } catch is CancellationError {
            logger.log(RequestRecord(endpoint: label, outcome: .cancelled, duration: start.duration(to: clock.now)))
            throw CancellationError()
        } catch {
            let kind = (error as? URLError).map { "URLError \($0.code.rawValue)" } ?? "\(type(of: error))"
            logger.log(RequestRecord(endpoint: label, outcome: .failed(kind), duration: start.duration(to: clock.now)))
            throw error
        }
    }

    // MARK: Reading answers

    /// The answer as `E.Answer` when its status is one of `endpoint`'s successes; otherwise the
    /// server's refusal.
    public func read<E: EndpointDefinition>(_ answer: HTTPAnswer, of endpoint: E) throws -> E.Answer
    where E.Answer: Decodable {
        guard endpoint.success.contains(answer.status) else { throw Self.refusal(answer) }
        do {
            return try Wire.decoder().decode(E.Answer.self, from: answer.body)
        } catch {
            throw UnreadableAnswer(endpoint: endpoint.description, status: answer.status, reason: "\(error)")
        }
    }

    /// The error an answer that is not a success stands for.
    public static func refusal(_ answer: HTTPAnswer) -> APIError {
        let problem =
            answer.header(Wire.Header.contentType)?.lowercased().hasPrefix(Problem.mediaType) == true
            ? try? Wire.decoder().decode(Problem.self, from: answer.body) : nil
        return APIError(
            status: answer.status, problem: problem,
            retryAfterHeader: answer.header(Wire.Header.retryAfter).flatMap { Int($0) })
    }
}
