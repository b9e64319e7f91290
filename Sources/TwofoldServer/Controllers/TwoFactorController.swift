import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

/// Managing second factors (seed 000, API.md "Second-factor management"): authenticator apps,
/// backup codes, status. Every call needs the user's access token; removing a factor or
/// regenerating codes also needs a recent second factor (step-up).
struct TwoFactorController: EndpointCollection {
    let configuration: Configuration
    let clock: ServerClock
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let totp: TOTPService
    let backupCodes: BackupCodeService
    let codes: OneTimeCodeService
    let users: any UserStore
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy
    let passkeys: PasskeyService

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
        let user = try await request.currentUser(in: users)
        try await policy.require(.add(kind: .totp), caller: request.caller, user: user)
        return try Response.json(
            try await totp.setup(userID: user.id, account: user.email))
    }

    @Sendable func verifyTOTP(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let userID = user.id
        let body = try request.content.decode(CodeRequest.self)
        try await policy.require(.add(kind: .totp), caller: request.caller, user: user)
        let now = clock.now()
        // The first second factor also hands out the backup codes. Both are recorded on this
        // session before the secret becomes active, so a parallel step-up with the new app
        // finds them recorded.
        let hadBackupCodes = try await backupCodes.exist(for: userID)
        try await factorChanges.recordAdding(
            FactorChanges.factorName(method: .totp), withNewBackupCodes: !hadBackupCodes, caller: request.caller)
        try await totp.confirm(body.code, userID: userID, origin: request.origin)
        try await audit.record(.factorAdded, user: userID, detail: FactorMethod.totp.rawValue, origin: request.origin)
        let codes: [String]? = hadBackupCodes ? nil : try await backupCodes.regenerate(for: userID)
        try await factorChanges.notifyAdded("An authenticator app", user: user)
        return try Response.json(FactorEnabledResponse(backupCodes: codes, serverTime: now))
    }

    @Sendable func deleteTOTP(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(
            .remove(proof: FactorChanges.factorName(method: .totp)), caller: request.caller, user: user)
        let userID = user.id
        guard try await totp.remove(userID: userID) else {
            throw Problem(status: 404, code: .notFound, title: "No authenticator app is enabled")
        }
        try await secondFactors.purgeIfNoneLeft(userID: user.id, origin: request.origin)
        try await audit.record(.factorRemoved, user: userID, detail: FactorMethod.totp.rawValue, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func regenerateBackupCodes(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(.add(kind: .backup), caller: request.caller, user: user)
        let userID = user.id
        guard try await !secondFactors.available(for: user).isEmpty else {
            throw Problem(
                status: 409, code: .conflict, title: "No second factor",
                detail: "Enable an authenticator app first; backup codes stand in for it.")
        }
        // The new codes are this session's to show, never its proof.
        try await factorChanges.recordAdding([FactorChanges.factorName(method: .backup)], caller: request.caller)
        let codes = try await backupCodes.regenerate(for: userID)
        try await audit.record(.factorAdded, user: userID, detail: "backup codes regenerated", origin: request.origin)
        return try Response.json(BackupCodesResponse(backupCodes: codes))
    }

    @Sendable func status(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let userID = user.id
        let totp = try await totp.active(for: userID)
        let backupCodes = try await backupCodes.summary(for: userID)
        return try Response.json(
            TwoFactorStatus(
                methods: try await secondFactors.available(for: user),
                totpConfiguredAt: totp?.confirmedAt, passkeys: try await passkeys.list(userID: userID),
                sms: .init(enabled: user.smsEnabled, maskedDestination: user.phone.map(Masking.phone)),
                email: .init(enabled: user.emailEnabled, maskedDestination: Masking.email(user.email)),
                backupCodesRemaining: backupCodes.unused, backupCodesGeneratedAt: backupCodes.generatedAt,
                trustedDeviceCount: try await trustedDeviceCount(userID, request: request),
                serverTime: clock.now()))
    }

    @Sendable func flatStatus(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let methods = try await secondFactors.available(for: user)
        return try Response.json(
            MFAStatus(
                enabled: !methods.isEmpty, methods: methods,
                backupCodesRemaining: try await backupCodes.remaining(for: user.id),
                trustedDeviceCount: try await trustedDeviceCount(user.id, request: request),
                serverTime: clock.now()))
    }

    // MARK: SMS and email codes

    @Sendable func setupSMS(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        // The body is optional: without one, the number on file is used.
        let body = request.body.data == nil ? SMSSetupRequest() : try request.content.decode(SMSSetupRequest.self)
        var destination = user.phone
        if let number = body.phoneNumber {
            guard let valid = InputValidation.phone(number) else {
                throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
            }
            destination = valid
        }
        // A number other than the verified one is a change of where codes go, as
        // `PUT /account/phone` is: the policy names it so.
        try await policy.require(
            destination != nil && destination != user.verifiedPhone ? .changeDestination(.sms) : .add(kind: .sms),
            caller: request.caller, user: user)
        guard let destination else {
            throw InputValidation.failure(["phoneNumber": "is required: this account has no phone number on file"])
        }
        return try await sendEnableCode(.sms, to: destination, user: user, request: request)
    }

    @Sendable func setupEmail(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(.add(kind: .email), caller: request.caller, user: user)
        return try await sendEnableCode(.email, to: user.email, user: user, request: request)
    }

    @Sendable func verifySMS(request: Request) async throws -> Response {
        try await confirmEnableCode(.sms, request: request)
    }

    @Sendable func verifyEmail(request: Request) async throws -> Response {
        try await confirmEnableCode(.email, request: request)
    }

    @Sendable func deleteSMS(request: Request) async throws -> Response {
        try await disableCodeFactor(.sms, request: request)
    }

    @Sendable func deleteEmail(request: Request) async throws -> Response {
        try await disableCodeFactor(.email, request: request)
    }

    @Sendable func setPrimaryMethod(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(PrimaryMethodRequest.self)
        try await policy.require(.configure, caller: request.caller, user: user)
        let enabled = try await secondFactors.available(for: user).filter { $0 != .backup }
        guard enabled.contains(body.method) else {
            throw InputValidation.failure([
                "method": "must be one of this account's factors: \(enabled.map(\.rawValue))"
            ])
        }
        try await users.setPrimaryMethod(
            body.method, userID: user.id, now: clock.now())
        return try Response.json(SuccessResponse())
    }

    func sendEnableCode(
        _ channel: DeliveryChannel, to destination: String, user: User, request: Request
    ) async throws -> Response {
        guard configuration.delivers(channel) else {
            throw Problem(
                status: 409, code: .conflict, title: "\(channel.rawValue) codes are switched off on this server")
        }
        return try Response.json(
            try await codes.send(
                channel, purpose: .enable, to: destination, userID: user.id, flowID: nil)
        )
    }

    func confirmEnableCode(_ channel: DeliveryChannel, request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let userID = user.id
        let body = try request.content.decode(CodeRequest.self)
        try await policy.require(.add(kind: channel.method), caller: request.caller, user: user)
        let destination = try await codes.verify(
            body.code, channel: channel, purpose: .enable, userID: userID, flowID: nil, origin: request.origin)
        if channel == .sms, destination != user.verifiedPhone {
            try await policy.require(.changeDestination(.sms), caller: request.caller, user: user)
        }
        let now = clock.now()
        let hadBackupCodes = try await backupCodes.exist(for: userID)
        try await factorChanges.recordAdding(
            FactorChanges.factorName(method: channel.method), withNewBackupCodes: !hadBackupCodes,
            caller: request.caller)
        // Told at the destinations on file before the change, so a number that replaces the
        // owner's is not the only one to hear of it.
        try await factorChanges.notifyAdded(
            channel == .sms
                ? "SMS codes to \(Masking.phone(destination))" : "Email codes to \(Masking.email(destination))",
            user: user)
        try await users.enableCodes(
            channel, phone: channel == .sms ? destination : nil, userID: userID, now: now)
        try await audit.record(.factorAdded, user: userID, detail: channel.rawValue, origin: request.origin)
        let codes: [String]? =
            hadBackupCodes ? nil : try await backupCodes.regenerate(for: userID)
        return try Response.json(FactorEnabledResponse(backupCodes: codes, serverTime: now))
    }

    func disableCodeFactor(_ channel: DeliveryChannel, request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(.remove(proof: channel.rawValue), caller: request.caller, user: user)
        let userID = user.id
        // One conditional update: of two removals at once, one finds the codes on.
        guard try await users.disableCodes(channel, userID: userID, now: clock.now())
        else {
            throw Problem(status: 404, code: .notFound, title: "\(channel.rawValue) codes are not enabled")
        }
        try await secondFactors.purgeIfNoneLeft(userID: userID, origin: request.origin)
        try await audit.record(.factorRemoved, user: userID, detail: channel.rawValue, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func trustedDevices(request: Request) async throws -> Response {
        let userID = try request.caller.userID
        return try Response.json(
            TrustedDevicesResponse(devices: try await trustedDevices.list(userID: userID)))
    }

    @Sendable func revokeTrustedDevice(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(.signOut, caller: request.caller, user: user)
        let userID = user.id
        guard let id = request.parameters.get("deviceID", as: UUID.self) else {
            throw Problem(status: 404, code: .notFound, title: "No such remembered device")
        }
        try await trustedDevices.revoke(id: id, userID: userID, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    func trustedDeviceCount(_ userID: UUID, request: Request) async throws -> Int {
        try await trustedDevices.list(userID: userID).count
    }

}
