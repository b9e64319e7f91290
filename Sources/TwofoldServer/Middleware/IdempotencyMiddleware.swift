import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

/// Honours `Idempotency-Key` on every change (`Idempotency`): in front of each POST, PUT, PATCH
/// and DELETE endpoint, after the bearer check, so a signed-in caller's keys are the session's
/// (whatever refreshed token or address the retry comes with) and anyone else's are the client
/// address's. Not the user's: another session of the same account, one that proved less, must
/// not be handed what a request the policy let through answered (a replay runs no check). Without the header a request passes untouched. An answer below 500 is kept,
/// refusals included (a wrong code sent again is the same wrong code, not a second guess); a
/// server-side failure keeps nothing, so the retry runs.
struct IdempotencyMiddleware: AsyncMiddleware {
    let idempotency: Idempotency
    /// Bodies longer than this are not read here (the endpoint's own limit answers them).
    let maxBodyBytes: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let key = request.headers.first(name: Wire.Header.idempotencyKey) else {
            return try await next.respond(to: request)
        }
        let scope =
            request.auth.get(AuthenticatedUser.self).map { "session:\($0.sessionID.canonicalText)" }
            ?? "address:\(request.clientAddress ?? "-")"
        var body = request.body.data
        if body == nil, request.body.string == nil {
            body = try await request.body.collect(max: maxBodyBytes).get()
        }
        let fingerprint =
            Array("\(request.method.rawValue) \(request.url.path)?\(request.url.query ?? "")\n".utf8)
            + Self.canonical(body.map { Data($0.readableBytesView) } ?? Data())
        switch try await idempotency.start(key: key, scope: scope, fingerprint: fingerprint) {
        case .replay(let status, let contentType, let stored):
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: contentType)
            headers.replaceOrAdd(name: Wire.Header.idempotentReplayed, value: "true")
            return Response(
                status: HTTPResponseStatus(statusCode: status), headers: headers, body: .init(data: Data(stored)))
        case .run(let id):
            let response: Response
            do {
                response = try await next.respond(to: request)
            } catch let problem as Problem where problem.status < 500 {
                let refusal = Response.problem(problem)
                try await idempotency.finish(
                    id, status: problem.status,
                    contentType: refusal.headers.first(name: .contentType) ?? Problem.mediaType,
                    body: refusal.body.data.map { Array($0) } ?? [])
                throw problem
            } catch {
                try? await idempotency.abandon(id)
                throw error
            }
            guard response.status.code < 500, let answer = response.body.data else {
                try? await idempotency.abandon(id)
                return response
            }
            try await idempotency.finish(
                id, status: Int(response.status.code),
                contentType: response.headers.first(name: .contentType) ?? Wire.json,
                body: Array(answer))
            return response
        }
    }

    /// A JSON body with its members in one order (the same request sent again by another
    /// encoder is the same request); any other body as it came. So is a body naming a member
    /// twice: the handler reads the first, `JSONSerialization` keeps the last, and two bodies
    /// the handler reads differently must not share a fingerprint.
    static func canonical(_ body: Data) -> [UInt8] {
        guard !body.isEmpty, (try? JSONUniqueMembers.check(body)) != nil,
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let sorted = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return Array(body) }
        return Array(sorted)
    }
}
