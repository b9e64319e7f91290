import Vapor

/// Echoes the request id (taken from an incoming `X-Request-Id` or generated) in the answer, so a
/// client report can be matched to the server's log lines, which carry it as `request-id`.
/// An incoming id is kept only when it is 1 to 64 characters of `A-Z a-z 0-9 . _ : -`; any
/// other is replaced by a fresh one, so a client cannot write into the log with it (issue S
/// item 10). Every answer also says `X-Content-Type-Options: nosniff`, so no browser reads a
/// JSON answer as a script or a page. (On futures, as `MetricsMiddleware` explains.)
struct RequestIDMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let id = Self.isAcceptable(request.id) ? request.id : UUID().uuidString
        if id != request.id {
            request.logger[metadataKey: "request-id"] = .string(id)
        }
        request.storage[LoggedRequestID.self] = id
        return next.respond(to: request).map { response in
            response.headers.replaceOrAdd(name: .xRequestId, value: id)
            response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
            return response
        }
    }

    static func isAcceptable(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

private struct LoggedRequestID: StorageKey {
    typealias Value = String
}

extension Request {
    /// The id this request's log lines carry (`RequestIDMiddleware`).
    var loggedID: String { storage[LoggedRequestID.self] ?? id }
}
