import Foundation
import TwofoldAPI
import Vapor

/// A forgotten password (`PasswordReset`) and the account's address proven (`EmailVerification`)
/// over JSON: the emailed links' steps.
struct PasswordResetController: EndpointCollection {
    let reset: PasswordReset
    let verification: EmailVerification
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.PasswordReset.forgot, use: forgot)
        routes.on(API.PasswordReset.options, use: options)
        routes.on(API.PasswordReset.sendCode, use: sendCode)
        routes.on(API.PasswordReset.deviceKeyChallenge, use: deviceKeyChallenge)
        routes.on(API.PasswordReset.passkeyOptions, use: passkeyOptions)
        routes.on(API.PasswordReset.reset, use: resetPassword)
        routes.on(API.Account.emailStatus, use: emailStatus)
        routes.on(API.Account.sendEmailVerification, use: sendEmailVerification)
        routes.on(API.Account.verifyEmail, use: verifyEmail)
    }

    @Sendable func forgot(request: Request, body: PasswordForgotRequest) async throws -> PasswordForgotResponse {
        try await reset.forgot(body, origin: request.origin, logger: request.logger)
    }

    @Sendable func options(request: Request, body: PasswordResetOptionsRequest) async throws -> PasswordResetOptions {
        try await reset.options(token: body.token)
    }

    @Sendable func sendCode(request: Request, body: PasswordResetSendRequest) async throws -> CodeSentResponse {
        try await reset.sendCode(token: body.token)
    }

    @Sendable func deviceKeyChallenge(
        request: Request, body: PasswordResetChallengeRequest
    ) async throws -> DeviceChallengeResponse {
        try await reset.deviceKeyChallenge(body)
    }

    @Sendable func passkeyOptions(
        request: Request, body: PasswordResetOptionsRequest
    ) async throws -> PasskeyRequestOptions {
        try await reset.passkeyOptions(token: body.token)
    }

    @Sendable func resetPassword(request: Request, body: PasswordResetRequest) async throws -> SuccessResponse {
        try await reset.reset(body, origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func emailStatus(request: Request, _: NoContent) async throws -> EmailVerificationStatus {
        verification.status(of: try await request.currentUser(in: callers))
    }

    @Sendable func sendEmailVerification(request: Request, _: NoContent) async throws -> EmailVerificationStatus {
        try await verification.resend(for: try await request.currentUser(in: callers), origin: request.origin)
    }

    @Sendable func verifyEmail(request: Request, body: EmailVerifyRequest) async throws -> EmailVerificationStatus {
        try await verification.verify(
            token: body.token, caller: try request.caller, origin: request.origin)
    }
}
