import Vapor

/// Logs each request's method and path, as Vapor's `RouteLoggingMiddleware` does, but with the
/// path's control characters escaped: Vapor writes the percent-decoded path as it is, so a
/// `%0A` in it began a forged log line (issue S item 10).
struct RequestLoggingMiddleware: Middleware {
    let level: Logger.Level

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        // The message is built only when the level is logged: reading `url.path` costs.
        request.logger.log(
            level: level,
            "\(request.method) \(LogText.escaped(request.url.path.removingPercentEncoding ?? request.url.path))")
        return next.respond(to: request)
    }
}
