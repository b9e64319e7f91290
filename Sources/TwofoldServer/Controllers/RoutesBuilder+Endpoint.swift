import Foundation
import TwofoldAPI
import Vapor

/// A controller: a set of handlers, each registered for one endpoint of `API`.
protocol EndpointCollection: Sendable {
    func boot(routes: EndpointRoutes)
}

/// What a handler answers for an endpoint: the endpoint's declared `Answer`, the status it goes
/// with (one of the endpoint's `success` statuses) and any headers or cookies beside it.
struct Reply<Answer: Sendable>: Sendable {
    var answer: Answer
    var status: HTTPResponseStatus
    var headers: HTTPHeaders = [:]
    var cookies = HTTPCookies()
}

/// A request body type a client may leave out: no body reads as `init()` (a body that is there
/// is read as usual).
protocol BodyMayBeAbsent: Decodable {
    init()
}

extension SMSSetupRequest: BodyMayBeAbsent {
    init() { self.init(phoneNumber: nil) }
}

extension PasskeyRegistrationOptionsRequest: BodyMayBeAbsent {
    init() { self.init(hints: nil) }
}

/// An answer whose JSON the server writes by hand (the second step's, the most frequent
/// answer of a sign-in): the same document `Wire.encoder()` writes, faster.
protocol HandWrittenJSON {
    var json: String { get }
}

extension SecondStepResponse: HandWrittenJSON {}

/// Where controllers register their handlers: the application's routes, with the middleware
/// each kind of access needs (a bearer token; an administrator's) in front.
///
/// A handler is registered by its endpoint's types: it is given the endpoint's `Body`, decoded
/// (nothing is read for `NoContent`), and answers the endpoint's `Answer`, so the compiler
/// checks each handler against its endpoint's definition in `API`. These are the only ways a
/// handler is registered, so every route the server answers is an endpoint of `API`.
struct EndpointRoutes {
    let anyone: any RoutesBuilder
    let signedIn: any RoutesBuilder
    /// Signed-in endpoints a session a recovery pass began may call before it sets up a factor
    /// (`API.Recovery.beforeFactorSetup`): without the `RecoveryGate` the others have.
    let settingUp: any RoutesBuilder
    let admin: any RoutesBuilder
    /// In front of every change, after the access checks (`Idempotency-Key`).
    let idempotency: IdempotencyMiddleware

    init(
        _ routes: any RoutesBuilder, bearer: BearerAuthentication, recoveryGate: RecoveryGate, adminOnly: AdminOnly,
        idempotency: IdempotencyMiddleware
    ) {
        anyone = routes
        settingUp = routes.grouped(bearer)
        signedIn = routes.grouped(bearer, recoveryGate)
        admin = routes.grouped(bearer, recoveryGate, adminOnly)
        self.idempotency = idempotency
    }

    /// Registers `handler` for `endpoint`, which has one success status: its answer goes with it.
    /// `before` runs ahead of reading the body (a check whose refusal does not depend on it).
    /// `bodyLimit` raises the largest body read for this endpoint above the server's
    /// (`TWOFOLD_MAX_BODY_BYTES`), for the one that takes a file.
    func on<E: EndpointDefinition>(
        _ endpoint: E, before check: (@Sendable (Request) throws -> Void)? = nil, bodyLimit: Int? = nil,
        use handler: @escaping @Sendable (Request, E.Body) async throws -> E.Answer
    ) where E.Body: Decodable, E.Answer: Encodable {
        precondition(endpoint.success.count == 1, "\(endpoint) has several success statuses: register a reply")
        let status = HTTPResponseStatus(statusCode: endpoint.success.first ?? 200)
        on(endpoint, before: check, bodyLimit: bodyLimit) { request, body in
            Reply(answer: try await handler(request, body), status: status)
        }
    }

    /// Registers `handler` for `endpoint`; its reply says which of the endpoint's success
    /// statuses it is (a status outside them is the server's fault: `500`, logged).
    func on<E: EndpointDefinition>(
        _ endpoint: E, before check: (@Sendable (Request) throws -> Void)? = nil, bodyLimit: Int? = nil,
        reply handler: @escaping @Sendable (Request, E.Body) async throws -> Reply<E.Answer>
    ) where E.Body: Decodable, E.Answer: Encodable {
        let success = endpoint.success
        let name = endpoint.description
        route(endpoint, bodyLimit: bodyLimit) { request in
            try check?(request)
            let reply = try await handler(request, try Self.body(of: request, as: E.Body.self))
            guard success.contains(Int(reply.status.code)) else {
                request.logger.error(
                    "a handler answered a status its endpoint does not declare",
                    metadata: ["endpoint": "\(name)", "status": "\(reply.status.code)"])
                throw Abort(.internalServerError)
            }
            let response = Response(
                status: reply.status, headers: Response.jsonHeaders, body: try Self.json(reply.answer))
            if !reply.headers.isEmpty {
                for name in Set(reply.headers.map { $0.name.lowercased() }) { response.headers.remove(name: name) }
                for (name, value) in reply.headers { response.headers.add(name: name, value: value) }
            }
            for (name, value) in reply.cookies.all { response.cookies[name] = value }
            return response
        }
    }

    /// Registers `handler` for a text endpoint (`/metrics`, `/openapi.yaml`), answered as
    /// `contentType`.
    func on(
        _ endpoint: Endpoint<NoContent, PlainText>, contentType: String,
        use handler: @escaping @Sendable (Request) async throws -> PlainText
    ) {
        route(endpoint) { request in
            Response(
                status: .ok, headers: ["Content-Type": contentType],
                body: .init(string: try await handler(request).text))
        }
    }

    /// Registers `handler` for an endpoint that answers a file (`FileContents`): its bytes as
    /// an attachment of its type, which no browser renders in this server's origin.
    func on(
        _ endpoint: ResourceEndpoint<NoContent, FileContents>,
        use handler: @escaping @Sendable (Request, NoContent) async throws -> FileContents
    ) {
        route(endpoint) { request in .attachment(try await handler(request, NoContent())) }
    }

    /// `request`'s body as `Body`: nothing read for `NoContent`, `init()` for a missing body a
    /// client may leave out, else the JSON read by `decodeJSONBody`.
    private static func body<Body: Decodable>(of request: Request, as type: Body.Type) throws -> Body {
        if let none = NoContent() as? Body { return none }
        if request.body.data == nil, let absent = type as? any BodyMayBeAbsent.Type,
            let empty = absent.init() as? Body
        {
            return empty
        }
        return try request.decodeJSONBody(Body.self)
    }

    /// `answer` as the endpoint's JSON: written by hand when its type does so, else by
    /// `Wire.encoder()`.
    private static func json(_ answer: some Encodable) throws -> Response.Body {
        if let written = answer as? any HandWrittenJSON { return .init(string: written.json) }
        return .init(data: try Wire.encoder().encode(answer))
    }

    /// The route for `endpoint`: its method and path, behind what its access needs.
    private func route(
        _ endpoint: some EndpointDefinition, bodyLimit: Int? = nil,
        _ responder: @escaping @Sendable (Request) async throws -> Response
    ) {
        var builder: any RoutesBuilder
        switch endpoint.access {
        case .anyone: builder = anyone
        case .signedIn: builder = API.Recovery.beforeFactorSetup.contains(endpoint.erased) ? settingUp : signedIn
        case .admin: builder = admin
        }
        if endpoint.method != .get, !API.Auth.neverReplayed.contains(endpoint.erased) {
            builder = builder.grouped(
                bodyLimit.map { IdempotencyMiddleware(idempotency: idempotency.idempotency, maxBodyBytes: $0) }
                    ?? idempotency)
        }
        let path = endpoint.components.map { component -> PathComponent in
            switch component {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
        builder.on(
            HTTPMethod(rawValue: endpoint.method.rawValue), path,
            body: bodyLimit.map { .collect(maxSize: ByteCount(value: $0)) } ?? .collect, use: responder)
    }
}
