import Foundation
import TwofoldAPI
import Vapor

/// Turns every error into an `application/problem+json` answer with a stable `code`, or, for a
/// browser asking for a page outside `/api/`, into an HTML page saying the same (`HTML`).
///
/// Client mistakes keep a helpful `detail`; a database that cannot be reached is `503` with
/// `Retry-After` (`DatabaseOutage`); anything unexpected becomes a `500 internal_error`
/// whose details go to the log (with the request id) and, outside production, to the answer.
/// (On futures, as `MetricsMiddleware` explains.)
struct ProblemMiddleware: Middleware {
    let isProduction: Bool

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).flatMapErrorThrowing { error in
            let problem = self.problem(for: error, request: request)
            if problem.status >= 500 && !(error is Problem) && problem.status != 503 {
                request.logger.error(
                    "request failed", metadata: ["error": "\(String(reflecting: error))"])
            } else {
                request.logger.debug("request refused", metadata: ["code": "\(problem.code)"])
            }
            var headers = HTTPHeaders()
            if problem.code == .methodNotAllowed {
                let allowed = Self.allowedMethods(for: request)
                headers.replaceOrAdd(name: .allow, value: allowed.map(\.rawValue).joined(separator: ", "))
            }
            if HTML.wantsPage(request) {
                // A browser on a page (or a path that is none): a page it can read.
                if let retryAfter = problem.retryAfter {
                    headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter))
                }
                return Response.page(
                    HTML.problemPage(problem, requestID: request.loggedID),
                    status: HTTPResponseStatus(statusCode: problem.status), headers: headers)
            }
            return Response.problem(problem, headers: headers)
        }
    }

    func problem(for error: any Error, request: Request) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case is RouteNotFound:
            if !Self.allowedMethods(for: request).isEmpty {
                return Problem(
                    status: 405, code: .methodNotAllowed, title: "Method not allowed",
                    detail: "\(request.method.rawValue) is not supported on this path.")
            }
            return Problem(
                status: 404, code: .notFound, title: "Not found", detail: "No resource lives at this path.")
        case let decoding as DecodingError:
            return Self.problem(for: decoding)
        case let abort as any AbortError:
            return Self.problem(status: abort.status, detail: abort.reason)
        case let error where DatabaseOutage.reason(for: error) != nil:
            return DatabaseOutage.problem(DatabaseOutage.reason(for: error) ?? "")
        default:
            return Problem(
                status: 500, code: .internalError, title: "Internal server error",
                detail: isProduction
                    ? "The server could not complete the request; its log has the details under request id \(request.loggedID)."
                    : String(describing: error))
        }
    }

    /// Bad JSON syntax is a malformed request (400); well-formed JSON of the wrong shape fails
    /// validation (422) and names the field.
    static func problem(for error: DecodingError) -> Problem {
        func path(_ context: DecodingError.Context, appending key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return Problem(
                status: 400, code: .malformedRequest, title: "Malformed request",
                detail: "The body is not valid JSON.")
        case .dataCorrupted(let context):
            let field = path(context)
            return Problem(
                status: 422, code: .validationFailed, title: "Validation failed",
                detail: "\(field) has an invalid value.", errors: [field: "invalid value"])
        case .keyNotFound(let key, let context):
            let field = path(context, appending: key)
            return Problem(
                status: 422, code: .validationFailed, title: "Validation failed",
                detail: "\(field) is required.", errors: [field: "required"])
        case .valueNotFound(let type, let context), .typeMismatch(let type, let context):
            let field = path(context)
            return Problem(
                status: 422, code: .validationFailed, title: "Validation failed",
                detail: "\(field.isEmpty ? "The body" : field) must be \(jsonKind(of: type)).",
                errors: [field: "must be \(jsonKind(of: type))"])
        @unknown default:
            return Problem(status: 400, code: .malformedRequest, title: "Malformed request")
        }
    }

    private static func jsonKind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is Double.Type: return "a number"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a value of the expected kind"
        }
    }

    static func problem(status: HTTPResponseStatus, detail: String?) -> Problem {
        let code: ErrorCode
        switch status.code {
        case 400: code = .malformedRequest
        case 401: code = .unauthorized
        case 403: code = .forbidden
        case 404: code = .notFound
        case 405: code = .methodNotAllowed
        case 409: code = .conflict
        case 413: code = .payloadTooLarge
        case 415: code = .unsupportedMediaType
        case 422: code = .validationFailed
        case 429: code = .rateLimited
        case 503: code = .serviceUnavailable
        case 400..<500: code = .malformedRequest
        default: code = .internalError
        }
        let title = status.reasonPhrase.isEmpty ? "Error" : status.reasonPhrase
        let showDetail = status.code < 500 && detail != nil && detail != title
        return Problem(status: Int(status.code), code: code, title: title, detail: showDetail ? detail : nil)
    }

    /// The methods that have a route at this request's path, for `405` and its `Allow` header.
    static func allowedMethods(for request: Request) -> [HTTPMethod] {
        // As Vapor's router is given the path: its components, split at `/`.
        let components = request.url.path.split(separator: "/").map(String.init)
        var methods: [HTTPMethod] = []
        for route in request.application.routes.all where route.method != request.method {
            if matches(route.path, components), !methods.contains(route.method) {
                methods.append(route.method)
            }
        }
        return methods
    }

    private static func matches(_ pattern: [PathComponent], _ components: [String]) -> Bool {
        for (index, part) in pattern.enumerated() {
            switch part {
            case .catchall: return index < components.count
            case .constant(let value):
                guard index < components.count, components[index] == value else { return false }
            case .parameter, .anything:
                guard index < components.count else { return false }
            }
        }
        return pattern.count == components.count
    }
}

extension Response {
    static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]

    /// A problem document answer, with `Retry-After` when the problem carries `retryAfter`.
    static func problem(_ problem: Problem, headers: HTTPHeaders = [:]) -> Response {
        var headers = headers
        headers.replaceOrAdd(name: .contentType, value: "\(Problem.mediaType); charset=utf-8")
        if let retryAfter = problem.retryAfter {
            headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter))
        }
        let body = (try? Wire.encoder().encode(problem)) ?? Data("{}".utf8)
        return Response(
            status: HTTPResponseStatus(statusCode: problem.status), headers: headers,
            body: .init(data: body))
    }
}

extension Problem {
    /// `429 rate_limited`: a throttle refused the request for `retryAfter` seconds.
    static func rateLimited(_ retryAfter: Int) -> Problem {
        Problem(
            status: 429, code: .rateLimited, title: "Too many attempts",
            detail: "Wait \(retryAfter) seconds before trying again.", retryAfter: retryAfter)
    }
}
