import Foundation
import TwofoldAPI
import Vapor

/// Sign-in (seed 003) over JSON: register, login, refresh, logout, sessions, step-up. The use
/// cases are `Registration`, `SignIn` and `StepUp`; each handler decodes, calls one, encodes.
struct AuthController: EndpointCollection {
    let registration: Registration
    let signIn: SignIn
    let stepUps: StepUp
    let signOut: SignOut
    let sessions: SessionService
    let users: any UserStore
    let cookies: CookieRules

    func boot(routes: EndpointRoutes) {
        routes.on(API.Auth.register, use: register)
        routes.on(API.Auth.login, use: login)
        routes.on(API.Auth.refresh, use: refresh)
        routes.on(API.Auth.logout, use: logout)
        routes.on(API.Auth.logoutAll, use: logoutAll)
        routes.on(API.Auth.sessions, use: sessions)
        routes.on(API.Auth.revokeSession, use: revokeSession)
        routes.on(API.Auth.stepUp, use: stepUp)
        routes.on(API.Auth.stepUpSend, use: sendStepUpCode)
        routes.on(API.Auth.stepUpPasskeyOptions, use: stepUpPasskeyOptions)
    }

    @Sendable func register(request: Request) async throws -> Response {
        try registration.requireOpen()
        let user = try await registration.register(
            try request.content.decode(RegisterRequest.self), from: request.signInSource(cookies))
        let response = Response(status: .created)
        try response.content.encode(RegisterResponse(user: user.dto), using: Wire.encoder())
        return response
    }

    @Sendable func login(request: Request) async throws -> Response {
        let attempt = try request.content.decode(LoginRequest.self)
        switch try await signIn.start(attempt, from: request.signInSource(cookies), logger: request.logger) {
        case .signedIn(let tokens): return try Response.json(tokens)
        case .secondStep(let challenge): return try Response.json(challenge)
        }
    }

    @Sendable func refresh(request: Request) async throws -> Response {
        let body = try request.content.decode(RefreshRequest.self)
        guard !body.refreshToken.isEmpty, body.refreshToken.count <= 512 else {
            throw InputValidation.failure(["refreshToken": "is required"])
        }
        return try Response.json(try await sessions.refresh(body.refreshToken, origin: request.origin))
    }

    /// Ends the session the refresh token belongs to. Logging out twice is not an error.
    @Sendable func logout(request: Request) async throws -> Response {
        let body = try request.content.decode(RefreshRequest.self)
        try await signOut.session(refreshToken: body.refreshToken, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Signs out everywhere: every session, this one included, and every remembered device.
    @Sendable func logoutAll(request: Request) async throws -> Response {
        let caller = try request.caller
        try await signOut.everywhere(
            user: try await request.currentUser(in: users), caller: caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func sessions(request: Request) async throws -> Response {
        let caller = try request.caller
        return try Response.json(
            SessionsResponse(
                sessions: try await sessions.list(userID: caller.userID, current: caller.sessionID)))
    }

    @Sendable func revokeSession(request: Request) async throws -> Response {
        let caller = try request.caller
        try await signOut.session(
            request.parameters.get("sessionID", as: UUID.self), user: try await request.currentUser(in: users),
            caller: caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Step-up (seed 000): prove a factor again, or the password.
    @Sendable func stepUp(request: Request) async throws -> Response {
        let proof = try request.content.decode(StepUpRequest.self)
        return try Response.json(
            StepUpResponse(
                accessToken: try await stepUps.prove(proof, caller: try request.caller, origin: request.origin)))
    }

    /// Options for a passkey assertion that `POST /auth/step-up` (`method: webauthn`) takes.
    @Sendable func stepUpPasskeyOptions(request: Request) async throws -> Response {
        try Response.json(try await stepUps.passkeyOptions(userID: try request.caller.userID))
    }

    /// Sends an SMS or email code for `POST /auth/step-up` (`method: sms|email`).
    @Sendable func sendStepUpCode(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(StepUpSendRequest.self)
        return try Response.json(try await stepUps.sendCode(body.method, to: user))
    }
}
