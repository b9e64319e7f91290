import Foundation
import TwofoldAPI
import Vapor

/// Managing second factors over JSON (seed 000, API.md "Second-factor management"): each
/// handler reads the caller and the body and calls `FactorSettings`.
struct TwoFactorController: EndpointCollection {
    let settings: FactorSettings
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.TwoFactor.totpSetup, use: setupTOTP)
        routes.on(API.TwoFactor.totpVerify, use: verifyTOTP)
        routes.on(API.TwoFactor.totpDelete, use: deleteTOTP)
        routes.on(API.TwoFactor.backupCodesRegenerate, use: regenerateBackupCodes)
        routes.on(API.TwoFactor.status, use: status)
        routes.on(API.TwoFactor.smsSetup, use: setupSMS)
        routes.on(API.TwoFactor.smsVerify, use: verifySMS)
        routes.on(API.TwoFactor.smsDelete, use: deleteSMS)
        routes.on(API.TwoFactor.emailSetup, use: setupEmail)
        routes.on(API.TwoFactor.emailVerify, use: verifyEmail)
        routes.on(API.TwoFactor.emailDelete, use: deleteEmail)
        routes.on(API.TwoFactor.primaryMethod, use: setPrimaryMethod)
        routes.on(API.TwoFactor.mfaStatus, use: flatStatus)
        routes.on(API.TwoFactor.trustedDevices, use: trustedDevices)
        routes.on(API.TwoFactor.revokeTrustedDevice, use: revokeTrustedDevice)
    }

    @Sendable func setupTOTP(request: Request, _: NoContent) async throws -> TOTPSetupResponse {
        try await settings.setupTOTP(user: try await request.currentUser(in: callers), caller: try request.caller)
    }

    @Sendable func verifyTOTP(request: Request, body: CodeRequest) async throws -> FactorEnabledResponse {
        try await settings.confirmTOTP(
            body.code, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    @Sendable func deleteTOTP(request: Request, _: NoContent) async throws -> SuccessResponse {
        try await settings.removeTOTP(
            user: try await request.currentUser(in: callers), caller: try request.caller, origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func regenerateBackupCodes(request: Request, _: NoContent) async throws -> BackupCodesResponse {
        try await settings.regenerateBackupCodes(
            user: try await request.currentUser(in: callers), caller: try request.caller, origin: request.origin)
    }

    @Sendable func status(request: Request, _: NoContent) async throws -> TwoFactorStatus {
        try await settings.status(of: try await request.currentUser(in: callers))
    }

    @Sendable func flatStatus(request: Request, _: NoContent) async throws -> MFAStatus {
        try await settings.flatStatus(of: try await request.currentUser(in: callers))
    }

    // MARK: SMS and email codes

    /// The body may be left out: then the number on file is used.
    @Sendable func setupSMS(request: Request, body: SMSSetupRequest) async throws -> CodeSentResponse {
        try await settings.setupSMS(
            phoneNumber: body.phoneNumber, user: try await request.currentUser(in: callers), caller: try request.caller)
    }

    @Sendable func setupEmail(request: Request, _: NoContent) async throws -> CodeSentResponse {
        try await settings.setupEmail(user: try await request.currentUser(in: callers), caller: try request.caller)
    }

    @Sendable func verifySMS(request: Request, body: CodeRequest) async throws -> FactorEnabledResponse {
        try await confirmCodes(.sms, body, request: request)
    }

    @Sendable func verifyEmail(request: Request, body: CodeRequest) async throws -> FactorEnabledResponse {
        try await confirmCodes(.email, body, request: request)
    }

    @Sendable func deleteSMS(request: Request, _: NoContent) async throws -> SuccessResponse {
        try await disableCodes(.sms, request: request)
    }

    @Sendable func deleteEmail(request: Request, _: NoContent) async throws -> SuccessResponse {
        try await disableCodes(.email, request: request)
    }

    @Sendable func setPrimaryMethod(request: Request, body: PrimaryMethodRequest) async throws -> SuccessResponse {
        try await settings.setPrimaryMethod(
            body.method, user: try await request.currentUser(in: callers), caller: try request.caller)
        return SuccessResponse()
    }

    private func confirmCodes(
        _ channel: DeliveryChannel, _ body: CodeRequest, request: Request
    ) async throws -> FactorEnabledResponse {
        try await settings.confirmCodes(
            channel, code: body.code, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
    }

    private func disableCodes(_ channel: DeliveryChannel, request: Request) async throws -> SuccessResponse {
        try await settings.disableCodes(
            channel, user: try await request.currentUser(in: callers), caller: try request.caller,
            origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func trustedDevices(request: Request, _: NoContent) async throws -> TrustedDevicesResponse {
        try await settings.rememberedDevices(userID: try request.caller.userID)
    }

    @Sendable func revokeTrustedDevice(request: Request, _: NoContent) async throws -> SuccessResponse {
        try await settings.forgetRememberedDevice(
            request.parameters.get("deviceID", as: UUID.self), user: try await request.currentUser(in: callers),
            caller: try request.caller, origin: request.origin)
        return SuccessResponse()
    }
}
