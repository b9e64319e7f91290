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
        routes.on(API.SecondStep.validateTOTP, use: validateTOTP)
        routes.on(API.SecondStep.verifyBackupCode, use: verifyBackupCode)
        routes.on(API.SecondStep.verifyBackupCodeSeed000, use: verifyBackupCode)
        routes.on(API.SecondStep.verifyLogin, use: verifyLogin)
        routes.on(API.SecondStep.verifyOTP, use: verifyOTP)
        routes.on(API.SecondStep.resendOTP, use: resendOTP)
        routes.on(API.Passkeys.flowOptions, use: passkeyOptions)
        routes.on(API.Passkeys.flowVerify, use: verifyPasskey)
    }

    /// Seed 000: options for a passkey assertion that completes the flow.
    @Sendable func passkeyOptions(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeyFlowOptionsRequest.self)
        return try Response.json(
            try await secondStep.passkeyOptions(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken)))
    }

    /// Seed 000: a passkey as the second step.
    @Sendable func verifyPasskey(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeyFlowVerifyRequest.self)
        return try await complete(
            .init(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
                method: .webauthn, passkey: body.credential, trustDevice: body.trustDevice ?? false),
            request)
    }

    /// Seed 003: the SMS or email code sent for this flow.
    @Sendable func verifyOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(OTPVerifyRequest.self)
        return answer(
            try await secondStep.completeWithSentCode(
                flow: body.otpFlowId, code: body.code, trustDevice: body.trustDevice ?? false, origin: request.origin,
                on: request.eventLoop))
    }

    /// Seed 003: another code for the flow, after the cooldown, within the hourly limit.
    @Sendable func resendOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(OTPResendRequest.self)
        return try Response.json(try await secondStep.resendCode(flow: body.otpFlowId, method: body.method))
    }

    @Sendable func validateTOTP(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(TOTPValidateRequest.self)
        return try await complete(
            .init(flow: body.tempToken, method: .totp, code: body.code, trustDevice: body.trustDevice ?? false),
            request)
    }

    @Sendable func verifyBackupCode(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(BackupCodeVerifyRequest.self)
        return try await complete(
            .init(
                flow: try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken),
                method: .backup, code: body.backupCode, trustDevice: body.trustDevice ?? false),
            request)
    }

    /// Seed 002's form: the flow in the body or as the bearer token; `method` defaults to `totp`.
    @Sendable func verifyLogin(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(MFAVerifyLoginRequest.self)
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

    private func complete(_ attempt: SecondStep.Attempt, _ request: Request) async throws -> Response {
        answer(try await secondStep.complete(attempt, origin: request.origin, on: request.eventLoop))
    }

    /// The answer (its JSON written by hand, the fastest of a sign-in's encodings), and the
    /// remembered device's cookie.
    private func answer(_ signedIn: SecondStep.SignedIn) -> Response {
        let response = Response(status: .ok, headers: Response.jsonHeaders, body: .init(string: signedIn.answer.json))
        if let deviceToken = signedIn.trustedDeviceToken {
            response.cookies[cookies.trustedDevice] = cookies.cookie(deviceToken, lifetime: trustedDeviceLifetime)
        }
        return response
    }
}
