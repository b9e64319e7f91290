import Foundation
import TwofoldAPI
import Vapor

/// Who is calling, once their access token checked out.
struct AuthenticatedUser: Authenticatable {
    let userID: UUID
    let sessionID: UUID
    let methods: [String]
    let authTime: Date
}

/// Checks `Authorization: Bearer <access token>`: signed by one of our keys, not expired by the
/// server's clock, and its session not revoked (so sign-out takes effect at once, not after 15
/// minutes). Anything else is `401 unauthorized` with a `WWW-Authenticate` challenge.
struct BearerAuthentication: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let bearer = request.headers.bearerAuthorization else {
            throw Self.unauthorized("Send an access token as `Authorization: Bearer …`.")
        }
        let now = request.twofold.clock.now()
        guard let claims = await request.twofold.tokens.verify(bearer.token, now: now),
            let userID = UUID(canonicalText: claims.sub.value), let sessionID = UUID(canonicalText: claims.sid)
        else { throw Self.unauthorized("The access token is invalid or expired.") }
        guard try await request.twofold.sessions.isLive(sessionID: sessionID, userID: userID) else {
            throw Self.unauthorized("The session of this access token has ended.")
        }
        request.auth.login(
            AuthenticatedUser(
                userID: userID, sessionID: sessionID, methods: claims.amr,
                authTime: Date(timeIntervalSince1970: TimeInterval(claims.authTime))))
        return try await next.respond(to: request)
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

    /// The RFC 8176 values that count as a second factor.
    static let secondFactorMethods: Set<String> = ["otp", "sms", "hwk", "swk", "pin", "mfa", "fido", "face", "fpt"]

    /// Step-up (seed 000, API.md): demands a second factor proven within the last 5 minutes
    /// (`ProductRules.stepUpWindow`), otherwise `403 step_up_required` (complete it with
    /// `POST /auth/step-up`).
    func requireRecentSecondFactor() throws {
        let caller = try self.caller
        let window = twofold.rules.stepUpWindow
        let recent = caller.authTime >= twofold.clock.now().addingTimeInterval(-window)
        guard recent, caller.methods.contains(where: Self.secondFactorMethods.contains) else {
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "Confirm with a second factor (POST /api/v1/auth/step-up), then repeat the request.")
        }
        // A session that proved nothing but an SMS code (seed 004's SMS sign-in) is one factor,
        // and the one a SIM swap hands over: it cannot remove or replace the others (issue S).
        guard !Set(caller.methods).subtracting(["mfa", "sms"]).isEmpty else {
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "An SMS code alone cannot change sign-in methods; confirm with another factor "
                    + "(POST /api/v1/auth/step-up) or sign in with your password.")
        }
    }

    /// Step-up for `user`: a recent second factor when the account has one; for an account
    /// protected by a password alone, a sign-in within the step-up window (the strongest proof it
    /// can give).
    func requireStepUp(for user: User) async throws {
        if try await !SecondFactors.available(for: user, in: twofold.users).isEmpty {
            return try requireRecentSecondFactor()
        }
        let window = twofold.rules.stepUpWindow
        guard try caller.authTime >= twofold.clock.now().addingTimeInterval(-window) else {
            let minutes = Int((window / 60).rounded(.up))
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "Sign in again, then repeat the request within \(minutes) minute\(minutes == 1 ? "" : "s").")
        }
    }
}

/// Lets only administrators through (`403 forbidden` otherwise). Runs after `BearerAuthentication`.
struct AdminOnly: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let caller = try request.caller
        guard let user = try await request.twofold.users.user(id: caller.userID), user.isActiveAdmin else {
            throw Problem(status: 403, code: .forbidden, title: "Forbidden", detail: "This needs an administrator.")
        }
        return try await next.respond(to: request)
    }
}

extension Request {
    /// The signed-in caller's account (after `BearerAuthentication`); `401` when it is gone.
    func currentUser() async throws -> User {
        guard let user = try await twofold.users.user(id: try caller.userID) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        return user
    }
}
