import Crypto
import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

/// The pages' sessions and forms, decided in one place:
///
/// - A browser's session is a server session like any other: its cookie (`Wire.Cookie.session`,
///   HttpOnly, SameSite=Strict, `__Host-` and Secure outside localhost, `CookieRules`) holds
///   the session's refresh token, which the pages never rotate and no script can read. Signing
///   out, signing out everywhere, an administrator's reset and a recovery revoke it as they
///   revoke any session; a token exchanged at `POST /auth/refresh` stops working here.
/// - Every form carries a CSRF token: the keyed hash of a random cookie of its own
///   (`twofold_csrf`), compared in constant time; and a form whose `Origin` (or
///   `Sec-Fetch-Site`) says another site sent it is refused before anything is read.
struct BrowserSessions: Sendable {
    static let csrfCookie = "twofold_csrf"

    let sessions: SessionService
    let callers: Callers
    let recoveryGate: RecoveryGate
    let secrets: SecretBox
    let cookies: CookieRules
    /// The origins a form may come from (`TWOFOLD_WEBAUTHN_ORIGINS`), beside this server's own.
    let origins: [String]
    let lifetime: TimeInterval

    /// A signed-in visitor: who they are, what their session proved, and whether a recovery
    /// pass began it before the account had a factor again (then they may only set one up).
    struct Visitor: Sendable {
        let caller: AuthenticatedUser
        let user: User
        let mustSetUpFactor: Bool
        /// The session's refresh token, which signing out presents.
        let token: String
    }

    /// Whether `request` carries a session cookie at all (live or not).
    func hasSession(_ request: Request) -> Bool {
        request.cookies[cookies.name(Wire.Cookie.session)] != nil
    }

    /// The visitor a request's session cookie signs in, or `nil`.
    func visitor(_ request: Request) async throws -> Visitor? {
        guard let token = request.cookies[cookies.name(Wire.Cookie.session)]?.string, (1...128).contains(token.count),
            let session = try await sessions.browserSession(refreshToken: token)
        else { return nil }
        let caller = AuthenticatedUser(
            userID: session.userID, sessionID: session.id, methods: session.methods, authTime: session.authTime,
            proof: SessionProof(session))
        guard let user = try await callers.existing(caller), user.status != .disabled else { return nil }
        return Visitor(
            caller: caller, user: user, mustSetUpFactor: try await recoveryGate.mustSetUpFactor(caller, user: user),
            token: token)
    }

    /// Sets the session cookie of `tokens` (a sign-in just completed) on `response`, and a new
    /// CSRF seed: a form token of before the sign-in (or of another account) works no more.
    func begin(_ tokens: AuthTokensResponse, on response: Response) {
        response.cookies[cookies.name(Wire.Cookie.session)] = cookies.cookie(
            tokens.refreshToken.token, lifetime: lifetime)
        response.cookies[cookies.name(Self.csrfCookie)] = cookies.cookie(SecureToken.generate(), lifetime: lifetime)
        // The device cookie outlives the session: this browser's next password sign-in to the
        // account stays open while strangers guess elsewhere (`DeviceCookies`).
        if let device = tokens.deviceToken {
            response.cookies[cookies.device] = cookies.cookie(device, lifetime: sessions.deviceCookies.lifetime)
        }
    }

    /// Revokes the visitor's session and clears its cookie.
    func end(_ visitor: Visitor, request: Request, on response: Response) async throws {
        try await sessions.logout(refreshToken: visitor.token, origin: request.origin)
        clear(on: response)
    }

    func clear(on response: Response) {
        response.cookies[cookies.name(Wire.Cookie.session)] = cookies.cookie("", lifetime: 0)
        response.cookies[cookies.name(Self.csrfCookie)] = cookies.cookie("", lifetime: 0)
    }

    // MARK: Forms

    /// The CSRF token a page's forms carry for `request`, and the cookie to set when the
    /// browser has none yet.
    func csrf(_ request: Request) -> (token: String, cookie: HTTPCookies.Value?) {
        if let seed = request.cookies[cookies.name(Self.csrfCookie)]?.string, (32...128).contains(seed.count) {
            return (formToken(seed), nil)
        }
        let seed = SecureToken.generate()
        return (formToken(seed), cookies.cookie(seed, lifetime: lifetime))
    }

    /// Refuses a form posted from another site, or without the token its page gave.
    func checkForm(_ request: Request, token: String?) throws {
        if let site = request.headers.first(name: "Sec-Fetch-Site"), !["same-origin", "none"].contains(site) {
            throw Self.crossSite
        }
        if let origin = request.headers.first(name: .origin), !allowed(origin: origin, request: request) {
            throw Self.crossSite
        }
        guard let seed = request.cookies[cookies.name(Self.csrfCookie)]?.string, let token,
            ConstantTime.equals(formToken(seed), token)
        else { throw Self.missingToken }
    }

    private func allowed(origin: String, request: Request) -> Bool {
        if origins.contains(origin) { return true }
        // This server's own address as the browser reached it (a server on another port in tests).
        guard let host = request.headers.first(name: .host) else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    private func formToken(_ seed: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(seed.utf8), using: secrets.lookupKey(purpose: "page forms"))
            .hexString
    }

    static let crossSite = Problem(
        status: 403, code: .forbidden, title: "Form from another site",
        detail: "This form was sent from another site, so it was not accepted. Open the page here and try again.")

    static let missingToken = Problem(
        status: 403, code: .forbidden, title: "Form expired",
        detail: "This form is missing its security token or it no longer matches. Reload the page and try again.")
}
