import Vapor

/// Echoes the request id (taken from an incoming `X-Request-Id` or generated) in the answer, so a
/// client report can be matched to the server's log lines, which carry it as `request-id`.
/// (On futures, as `MetricsMiddleware` explains.)
struct RequestIDMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request).map { response in
            response.headers.replaceOrAdd(name: .xRequestId, value: request.id)
            return response
        }
    }
}
