import Foundation
import TwofoldAPI
import Vapor

/// Managing second factors over JSON (seed 000, API.md "Second-factor management"): each
/// handler reads the caller and the body and calls `FactorSettings`.
struct TwoFactorController: EndpointCollection {
    let settings: FactorSettings
    let users: any UserStore

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

    @Sendable func setupTOTP(request: Request) async throws -> Response {
        try Response.json(
            try await settings.setupTOTP(user: try await request.currentUser(in: users), caller: try request.caller))
    }

    @Sendable func verifyTOTP(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(CodeRequest.self)
        return try Response.json(
            try await settings.confirmTOTP(body.code, user: user, caller: try request.caller, origin: request.origin))
    }

    @Sendable func deleteTOTP(request: Request) async throws -> Response {
        try await settings.removeTOTP(
            user: try await request.currentUser(in: users), caller: try request.caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func regenerateBackupCodes(request: Request) async throws -> Response {
        try Response.json(
            try await settings.regenerateBackupCodes(
                user: try await request.currentUser(in: users), caller: try request.caller, origin: request.origin))
    }

    @Sendable func status(request: Request) async throws -> Response {
        try Response.json(try await settings.status(of: try await request.currentUser(in: users)))
    }

    @Sendable func flatStatus(request: Request) async throws -> Response {
        try Response.json(try await settings.flatStatus(of: try await request.currentUser(in: users)))
    }

    // MARK: SMS and email codes

    @Sendable func setupSMS(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        // The body is optional: without one, the number on file is used.
        let body = request.body.data == nil ? SMSSetupRequest() : try request.content.decode(SMSSetupRequest.self)
        return try Response.json(
            try await settings.setupSMS(phoneNumber: body.phoneNumber, user: user, caller: try request.caller))
    }

    @Sendable func setupEmail(request: Request) async throws -> Response {
        try Response.json(
            try await settings.setupEmail(user: try await request.currentUser(in: users), caller: try request.caller))
    }

    @Sendable func verifySMS(request: Request) async throws -> Response {
        try await confirmCodes(.sms, request: request)
    }

    @Sendable func verifyEmail(request: Request) async throws -> Response {
        try await confirmCodes(.email, request: request)
    }

    @Sendable func deleteSMS(request: Request) async throws -> Response {
        try await disableCodes(.sms, request: request)
    }

    @Sendable func deleteEmail(request: Request) async throws -> Response {
        try await disableCodes(.email, request: request)
    }

    @Sendable func setPrimaryMethod(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(PrimaryMethodRequest.self)
        try await settings.setPrimaryMethod(body.method, user: user, caller: try request.caller)
        return try Response.json(SuccessResponse())
    }

    private func confirmCodes(_ channel: DeliveryChannel, request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(CodeRequest.self)
        return try Response.json(
            try await settings.confirmCodes(
                channel, code: body.code, user: user, caller: try request.caller, origin: request.origin))
    }

    private func disableCodes(_ channel: DeliveryChannel, request: Request) async throws -> Response {
        try await settings.disableCodes(
            channel, user: try await request.currentUser(in: users), caller: try request.caller,
            origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func trustedDevices(request: Request) async throws -> Response {
        try Response.json(try await settings.rememberedDevices(userID: try request.caller.userID))
    }

    @Sendable func revokeTrustedDevice(request: Request) async throws -> Response {
        try await settings.forgetRememberedDevice(
            request.parameters.get("deviceID", as: UUID.self), user: try await request.currentUser(in: users),
            caller: try request.caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }
}
