import Vapor

/// Echoes the request id (taken from an incoming `X-Request-Id` or generated) in the answer, so a
/// client report can be matched to the server's log lines, which carry it as `request-id`.
struct RequestIDMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        response.headers.replaceOrAdd(name: .xRequestId, value: request.id)
        return response
    }
}
