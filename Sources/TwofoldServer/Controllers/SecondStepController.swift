import Foundation
import TwofoldAPI
import Vapor

/// The second step of a login flow (seeds 000, 002, 003) over JSON: each handler reads its
/// body and calls `SecondStep`, against the `otpFlowId`/`tempToken` that `POST /auth/login`
/// answered.
struct SecondStepController: EndpointCollection {
    let secondStep: SecondStep
    /// How long a remembered device's cookie lasts.
    let trustedDeviceLifetime: TimeInterval
    let cookies: CookieRules

    func boot(routes: EndpointRoutes) {
        routes.on(API.SecondStep.validateTOTP, reply: validateTOTP)
        routes.on(API.SecondStep.verifyBackupCode, reply: verifyBackupCode)
        routes.on(API.SecondStep.verifyBackupCodeSeed000, reply: verifyBackupCode)
        routes.on(API.SecondStep.verifyLogin, reply: verifyLogin)
        routes.on(API.SecondStep.verifyOTP, reply: verifyOTP)
        routes.on(API.SecondStep.resendOTP, use: resendOTP)
        routes.on(API.Passkeys.flowOptions, use: passkeyOptions)
        routes.on(API.Passkeys.flowVerify, reply: verifyPasskey)
    }

    /// Seed 000: options for a passkey assertion that completes the flow.
    @Sendable func passkeyOptions(request: Request, body: PasskeyFlowOptionsRequest) async throws
        -> PasskeyRequestOptions
    {
        try await secondStep.passkeyOptions(
            flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken))
    }

    /// Seed 000: a passkey as the second step.
    @Sendable func verifyPasskey(request: Request, body: PasskeyFlowVerifyRequest) async throws -> Reply<
        SecondStepResponse
    > {
        try await complete(
            .init(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
                method: .webauthn, passkey: body.credential, trustDevice: body.trustDevice ?? false),
            request)
    }

    /// Seed 003: the SMS or email code sent for this flow.
    @Sendable func verifyOTP(request: Request, body: OTPVerifyRequest) async throws -> Reply<SecondStepResponse> {
        answer(
            try await secondStep.completeWithSentCode(
                flow: body.otpFlowId, code: body.code, trustDevice: body.trustDevice ?? false, origin: request.origin,
                on: request.eventLoop))
    }

    /// Seed 003: another code for the flow, after the cooldown, within the hourly limit.
    @Sendable func resendOTP(request: Request, body: OTPResendRequest) async throws -> CodeSentResponse {
        try await secondStep.resendCode(flow: body.otpFlowId, method: body.method)
    }

    @Sendable func validateTOTP(request: Request, body: TOTPValidateRequest) async throws -> Reply<SecondStepResponse> {
        try await complete(
            .init(flow: body.tempToken, method: .totp, code: body.code, trustDevice: body.trustDevice ?? false),
            request)
    }

    @Sendable func verifyBackupCode(
        request: Request, body: BackupCodeVerifyRequest
    ) async throws -> Reply<SecondStepResponse> {
        try await complete(
            .init(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
                method: .backup, code: body.backupCode, trustDevice: body.trustDevice ?? false),
            request)
    }

    /// Seed 002's form: the flow in the body or as the bearer token; `method` defaults to `totp`.
    @Sendable func verifyLogin(request: Request, body: MFAVerifyLoginRequest) async throws -> Reply<SecondStepResponse>
    {
        guard let flow = body.otpFlowId ?? body.tempToken ?? request.headers.bearerAuthorization?.token else {
            throw InputValidation.failure(["otpFlowId": "is required, or tempToken or a bearer flow token in its place"]
            )
        }
        let method = body.method ?? .totp
        guard [.totp, .backup, .sms, .email, .deviceKey].contains(method) else {
            throw InputValidation.failure(["method": "must be totp, sms, email, backup or deviceKey"])
        }
        return try await complete(
            .init(
                flow: flow, method: method, code: body.code,
                deviceKey: .init(deviceId: body.deviceId, challengeId: body.challengeId, signature: body.signature),
                trustDevice: body.trustDevice ?? false),
            request)
    }

    private func complete(_ attempt: SecondStep.Attempt, _ request: Request) async throws -> Reply<SecondStepResponse> {
        answer(try await secondStep.complete(attempt, origin: request.origin, on: request.eventLoop))
    }

    private func answer(_ signedIn: SecondStep.SignedIn) -> Reply<SecondStepResponse> {
        signedIn.reply(cookies: cookies, trustedDeviceLifetime: trustedDeviceLifetime)
    }
}

extension SecondStep.SignedIn {
    /// The answer (its JSON written by hand, `HandWrittenJSON`), and the remembered device's
    /// cookie: every JSON second step answers so (`SecondStepController`, `PushController`).
    func reply(cookies: CookieRules, trustedDeviceLifetime: TimeInterval) -> Reply<SecondStepResponse> {
        var reply = Reply(answer: answer, status: .ok)
        if let deviceToken = trustedDeviceToken {
            reply.cookies[cookies.trustedDevice] = cookies.cookie(deviceToken, lifetime: trustedDeviceLifetime)
        }
        return reply
    }
}
