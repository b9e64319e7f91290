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
    let callers: Callers
    let cookies: CookieRules

    func boot(routes: EndpointRoutes) {
        routes.on(API.Auth.register, before: { _ in try registration.requireOpen() }, use: register)
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

    /// Registration closed answers `403` whatever was sent (`before`, ahead of the body).
    @Sendable func register(request: Request, form: RegisterRequest) async throws -> RegisterResponse {
        RegisterResponse(user: try await registration.register(form, from: request.signInSource(cookies)).dto)
    }

    @Sendable func login(request: Request, attempt: LoginRequest) async throws -> LoginOutcome {
        try await signIn.start(attempt, from: request.signInSource(cookies), logger: request.logger)
    }

    @Sendable func refresh(request: Request, body: RefreshRequest) async throws -> RefreshResponse {
        guard !body.refreshToken.isEmpty, body.refreshToken.count <= 512 else {
            throw InputValidation.failure(["refreshToken": "is required"])
        }
        return try await sessions.refresh(body.refreshToken, origin: request.origin)
    }

    /// Ends the session the refresh token belongs to. Logging out twice is not an error.
    @Sendable func logout(request: Request, body: RefreshRequest) async throws -> SuccessResponse {
        try await signOut.session(refreshToken: body.refreshToken, origin: request.origin)
        return SuccessResponse()
    }

    /// Signs out everywhere: every session, this one included, and every remembered device.
    @Sendable func logoutAll(request: Request, _: NoContent) async throws -> SuccessResponse {
        let caller = try request.caller
        try await signOut.everywhere(
            user: try await request.currentUser(in: callers), caller: caller, origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func sessions(request: Request, _: NoContent) async throws -> SessionsResponse {
        let caller = try request.caller
        return SessionsResponse(sessions: try await sessions.list(userID: caller.userID, current: caller.sessionID))
    }

    @Sendable func revokeSession(request: Request, _: NoContent) async throws -> SuccessResponse {
        let caller = try request.caller
        try await signOut.session(
            request.parameters.get("sessionID", as: UUID.self), user: try await request.currentUser(in: callers),
            caller: caller, origin: request.origin)
        return SuccessResponse()
    }

    /// Step-up (seed 000): prove a factor again, or the password.
    @Sendable func stepUp(request: Request, proof: StepUpRequest) async throws -> StepUpResponse {
        StepUpResponse(accessToken: try await stepUps.prove(proof, caller: try request.caller, origin: request.origin))
    }

    /// Options for a passkey assertion that `POST /auth/step-up` (`method: webauthn`) takes.
    @Sendable func stepUpPasskeyOptions(request: Request, _: NoContent) async throws -> PasskeyRequestOptions {
        try await stepUps.passkeyOptions(userID: try request.caller.userID)
    }

    /// Sends an SMS or email code for `POST /auth/step-up` (`method: sms|email`).
    @Sendable func sendStepUpCode(request: Request, body: StepUpSendRequest) async throws -> CodeSentResponse {
        try await stepUps.sendCode(body.method, to: try await request.currentUser(in: callers))
    }
}
