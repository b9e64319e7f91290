import Foundation
import TwofoldAPI
import Vapor

/// Who is calling, once their access token checked out.
struct AuthenticatedUser: Authenticatable {
    let userID: UUID
    let sessionID: UUID
    let methods: [String]
    let authTime: Date
    /// What the session proved, as stored when the request came in (`SignInPolicy` reads it).
    var proof = SessionProof()

    /// The caller's session as the one adding a factor: its writes happen only while it lives.
    var adding: AddingSession { AddingSession(sessionID) }
}

/// Checks `Authorization: Bearer <access token>`: signed by one of our keys, not expired by the
/// server's clock, and its session not revoked (so sign-out takes effect at once, not after 15
/// minutes). Anything else is `401 unauthorized` with a `WWW-Authenticate` challenge.
///
/// Without that header, a browser's session cookie signs the pages' script in, as it signs in
/// the pages (`BrowserSessions`), on the few endpoints that script calls (`API.pageScript`)
/// only, with the page's CSRF token in `X-CSRF-Token` and from this site, so another site
/// cannot make a signed-in browser call the API.
struct BearerAuthentication: AsyncMiddleware {
    let tokens: TokenService
    let sessions: SessionService
    let clock: ServerClock
    /// The pages' sessions (`nil`: bearer tokens only).
    var browser: BrowserSessions? = nil

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let bearer = request.headers.bearerAuthorization else {
            guard let browser, browser.hasSession(request), Self.isPageScript(request) else {
                throw Self.unauthorized("Send an access token as `Authorization: Bearer …`.")
            }
            guard let visitor = try await browser.visitor(request) else {
                throw Self.unauthorized("This browser's session has ended. Sign in again.")
            }
            try browser.checkForm(request, token: request.headers.first(name: Wire.Header.csrfToken))
            request.auth.login(visitor.caller)
            return try await next.respond(to: request)
        }
        let now = clock.now()
        guard let claims = await tokens.verify(bearer.token, now: now),
            let userID = UUID(canonicalText: claims.sub.value), let sessionID = UUID(canonicalText: claims.sid)
        else { throw Self.unauthorized("The access token is invalid or expired.") }
        guard let session = try await sessions.live(sessionID: sessionID, userID: userID) else {
            throw Self.unauthorized("The session of this access token has ended.")
        }
        request.auth.login(
            AuthenticatedUser(
                userID: userID, sessionID: sessionID, methods: claims.amr,
                authTime: Date(timeIntervalSince1970: TimeInterval(claims.authTime)), proof: SessionProof(session)))
        return try await next.respond(to: request)
    }

    /// Whether `request` is for one of `API.pageScript` (none has a path parameter).
    static func isPageScript(_ request: Request) -> Bool {
        API.pageScript.contains { $0.method.rawValue == request.method.rawValue && $0.template == request.routedPath }
    }

    static func unauthorized(_ detail: String) -> Problem {
        Problem(status: 401, code: .unauthorized, title: "Unauthorized", detail: detail)
    }
}

extension Request {
    /// The caller authenticated by `BearerAuthentication`.
    var caller: AuthenticatedUser {
        get throws {
            guard let caller = auth.get(AuthenticatedUser.self) else {
                throw BearerAuthentication.unauthorized("Sign in first.")
            }
            return caller
        }
    }

    /// The signed-in caller's account (`Callers`); `401` when it is gone.
    func currentUser(in callers: Callers) async throws -> User {
        try await callers.account(of: try caller)
    }
}

/// Lets only administrators through, as `SignInPolicy.admitAdministrator` decides (an active
/// administrator whose session proved a second factor of their own; `403` otherwise). Runs after
/// `BearerAuthentication`.
struct AdminOnly: AsyncMiddleware {
    let policy: SignInPolicy

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        try await policy.admitAdministrator(try request.caller)
        return try await next.respond(to: request)
    }
}
