import Foundation
import TwofoldAPI
import Vapor

/// The signed-in user's own account: read it, change the password, change the phone number or
/// email address that SMS and email codes go to.
struct AccountController: EndpointCollection {
    let configuration: Configuration
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let codes: OneTimeCodeService
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let rules: ProductRules
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let stepUp: StepUp

    init(_ context: TwofoldContext) {
        configuration = context.configuration
        clock = context.clock
        passwords = context.passwords
        audit = context.audit
        trustedDevices = context.trustedDevices
        rateLimiter = context.rateLimiter
        sessions = context.sessions
        codes = context.codes
        users = context.users
        deviceKeys = context.deviceKeys
        rules = context.rules
        secondFactors = context.secondFactors
        factorChanges = context.factorChanges
        stepUp = context.stepUp
    }

    func boot(routes: EndpointRoutes) {
        routes.on(API.Account.show, use: show)
        routes.on(API.Account.changePassword, use: changePassword)
        routes.on(API.Account.changePhone, use: changePhone)
        routes.on(API.Account.changeEmail, use: changeEmail)
    }

    @Sendable func show(request: Request) async throws -> Response {
        try Response.json(try await request.currentUser(in: users).dto)
    }

    /// The current password proves ownership; the new one must meet the password policy. Every
    /// other session and every remembered device is revoked, so a thief who had either is out.
    @Sendable func changePassword(request: Request) async throws -> Response {
        let caller = try request.caller
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(PasswordChangeRequest.self)
        guard (1...256).contains(body.currentPassword.unicodeScalars.count) else {
            throw InputValidation.failure(["currentPassword": "must be 1 to 256 characters"])
        }
        if let problem = InputValidation.passwordProblem(body.newPassword, username: user.username, email: user.email) {
            throw InputValidation.failure(["newPassword": problem])
        }
        let now = clock.now()
        let key = "password-change:\(caller.userID)"
        try await rateLimiter.require(key, rule: .init(rules.passwordChange), now: now)
        guard try await passwords.verify(body.currentPassword, against: user.passwordHash) else {
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Wrong password",
                detail: "The current password is wrong.", errors: ["currentPassword": "is wrong"])
        }
        try await rateLimiter.reset(key, rule: .init(rules.passwordChange), now: now)
        try await users.setPasswordHash(
            try await passwords.hash(body.newPassword), userID: caller.userID, now: now)
        try await sessions.revokeAll(
            userID: caller.userID, except: caller.sessionID, reason: "password changed")
        try await trustedDevices.revokeAll(userID: caller.userID, origin: request.origin)
        // A device key signs in without the password, so a new password alone does not shut out
        // whoever enrolled one: `removeDeviceKeys` removes them all, and the notice names those
        // that remain.
        let keyDevices = try await deviceKeys.store.devices(userID: caller.userID)
            .filter { $0.method == .secureEnclave }
        var remaining = keyDevices
        if body.removeDeviceKeys == true, !keyDevices.isEmpty {
            try await deviceKeys.store.delete(deviceRowIDs: keyDevices.map(\.id))
            for device in keyDevices {
                try await audit.record(
                    .factorRemoved, user: caller.userID, detail: "device \(device.deviceID) removed with the password",
                    origin: request.origin)
            }
            try await secondFactors.purgeIfNoneLeft(userID: user.id, origin: request.origin)
            remaining = []
        }
        let keys =
            remaining.isEmpty
            ? "No device keys can sign in to your account."
            : "These device keys can still sign in without the password: "
                + remaining.map { "\($0.deviceModel ?? "a device") (\($0.deviceID))" }.joined(separator: ", ")
                + ". Remove any you do not recognise."
        try await factorChanges.notify(
            user, subject: "Your password was changed",
            body: "Twofold: your password was changed and your other sessions were signed out. \(keys)")
        try await audit.record(.passwordChanged, user: caller.userID, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Step 1 (no `code`): step-up, then a code to the new number. Step 2 (`code`): the number
    /// the code went to becomes the one on file.
    @Sendable func changePhone(request: Request) async throws -> Response {
        let body = try request.content.decode(PhoneChangeRequest.self)
        guard let number = InputValidation.phone(body.phoneNumber) else {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        return try await changeDestination(.sms, to: number, code: body.code, request: request)
    }

    /// As `changePhone`, for the email address (which is also the sign-in name).
    @Sendable func changeEmail(request: Request) async throws -> Response {
        let body = try request.content.decode(EmailChangeRequest.self)
        guard let address = InputValidation.email(body.email) else {
            throw InputValidation.failure(["email": "must be an email address"])
        }
        return try await changeDestination(.email, to: address, code: body.code, request: request)
    }

    func changeDestination(
        _ channel: DeliveryChannel, to destination: String, code: String?, request: Request
    ) async throws -> Response {
        var user = try await request.currentUser(in: users)
        let userID = user.id
        let field = channel == .sms ? "phoneNumber" : "email"
        guard let code else {
            try await stepUp.require(caller: request.caller, for: user)
            guard configuration.delivers(channel) else {
                throw Problem(
                    status: 409, code: .conflict, title: "\(channel.rawValue) codes are switched off on this server",
                    detail: "A new \(field) cannot be confirmed without sending it a code.")
            }
            if channel == .email, destination != user.email,
                try await users.emailInUse(destination, except: userID)
            {
                throw Self.emailTaken
            }
            let response = try Response.json(
                try await codes.send(
                    channel, purpose: .changeDestination, to: destination, userID: userID, flowID: nil))
            response.status = .accepted
            return response
        }
        let confirmed = try await codes.verify(
            code, channel: channel, purpose: .changeDestination, userID: userID, flowID: nil, origin: request.origin)
        guard confirmed == destination else {
            throw Problem(
                status: 409, code: .conflict, title: "The code was sent elsewhere",
                detail: "That code confirms a different \(field); ask for a new code for this one.",
                errors: [field: "does not match the one the code was sent to"])
        }
        // A destination that carries sign-in codes is a factor added in this session; the old
        // destinations hear of the change first.
        let carriesCodes = channel == .sms ? user.smsEnabled : user.emailEnabled
        try await sessions.recordAdded(
            carriesCodes ? [channel.rawValue] : [], sessionID: try request.caller.sessionID)
        try await factorChanges.notify(
            user, subject: "Your \(channel == .sms ? "phone number" : "email address") was changed",
            body: "Twofold: the \(channel == .sms ? "phone number" : "email address") of your account is now "
                + "\(Masking.destination(destination, channel: channel)). If this was not you, sign in and change "
                + "your password.")
        let now = clock.now()
        if channel == .sms {
            try await users.setVerifiedPhone(destination, userID: userID, now: now)
            user.phone = destination
            user.phoneVerifiedAt = now
        } else {
            guard try await users.setEmail(destination, userID: userID, now: now) else {
                throw Self.emailTaken
            }
            user.email = destination
        }
        user.updatedAt = now
        try await audit.record(
            channel == .sms ? .phoneChanged : .emailChanged, user: userID,
            detail: Masking.destination(destination, channel: channel), origin: request.origin)
        return try Response.json(user.dto)
    }

    static let emailTaken = Problem(
        status: 409, code: .conflict, title: "Address in use",
        detail: "Another account uses that email address.", errors: ["email": "is in use"])
}
