import Fluent
import Foundation
import TwofoldAPI
import Vapor

/// The signed-in user's own account: read it, change the password, change the phone number or
/// email address that SMS and email codes go to.
struct AccountController: RouteCollection {
    /// Wrong current passwords allowed before `PUT /account/password` waits (per account).
    static let passwordChangeRule = RateLimiter.Rule(capacity: 5, perSecond: 5.0 / 900)

    func boot(routes: any RoutesBuilder) throws {
        let account = routes.grouped(BearerAuthentication()).grouped("account")
        account.get(use: show)
        account.put("password", use: changePassword)
        account.put("phone", use: changePhone)
        account.put("email", use: changeEmail)
    }

    @Sendable func show(request: Request) async throws -> Response {
        try Response.json(try await TwoFactorController.user(request).dto)
    }

    /// The current password proves ownership; the new one must meet the password policy. Every
    /// other session and every remembered device is revoked, so a thief who had either is out.
    @Sendable func changePassword(request: Request) async throws -> Response {
        let caller = try request.caller
        let user = try await TwoFactorController.user(request)
        let body = try request.content.decode(PasswordChangeRequest.self)
        guard !body.currentPassword.isEmpty, body.currentPassword.count <= 256 else {
            throw InputValidation.failure(["currentPassword": "is required"])
        }
        if let problem = InputValidation.passwordProblem(body.newPassword, username: user.username, email: user.email) {
            throw InputValidation.failure(["newPassword": problem])
        }
        let now = request.twofold.clock.now()
        let key = "password-change:\(caller.userID)"
        if case .limited(let retryAfter) = try await RateLimiter.take(
            key, rule: Self.passwordChangeRule, now: now, on: request.db)
        {
            throw AuthController.rateLimited(retryAfter)
        }
        guard try await request.twofold.passwords.verify(body.currentPassword, against: user.passwordHash) else {
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Wrong password",
                detail: "The current password is wrong.", errors: ["currentPassword": "is wrong"])
        }
        try await RateLimiter.reset(key, rule: Self.passwordChangeRule, now: now, on: request.db)
        user.passwordHash = try await request.twofold.passwords.hash(body.newPassword)
        user.updatedAt = now
        try await user.update(on: request.db)
        _ = try await SessionService.revokeAll(
            userID: caller.userID, except: caller.sessionID, reason: "password changed", now: now, on: request.db)
        try await TrustedDeviceService.revokeAll(userID: caller.userID, request: request)
        try await AuditLog.record(.passwordChanged, user: caller.userID, request: request)
        return try Response.json(SuccessResponse())
    }

    /// Step 1 (no `code`): step-up, then a code to the new number. Step 2 (`code`): the number
    /// the code went to becomes the one on file.
    @Sendable func changePhone(request: Request) async throws -> Response {
        let body = try request.content.decode(PhoneChangeRequest.self)
        guard let number = InputValidation.phone(body.phoneNumber) else {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        return try await Self.changeDestination(.sms, to: number, code: body.code, request: request)
    }

    /// As `changePhone`, for the email address (which is also the sign-in name).
    @Sendable func changeEmail(request: Request) async throws -> Response {
        let body = try request.content.decode(EmailChangeRequest.self)
        guard let address = InputValidation.email(body.email) else {
            throw InputValidation.failure(["email": "must be an email address"])
        }
        return try await Self.changeDestination(.email, to: address, code: body.code, request: request)
    }

    static func changeDestination(
        _ channel: OutboxMessage.Channel, to destination: String, code: String?, request: Request
    ) async throws -> Response {
        let user = try await TwoFactorController.user(request)
        let userID = try user.requireID()
        let field = channel == .sms ? "phoneNumber" : "email"
        guard let code else {
            try await request.requireStepUp(for: user)
            guard TwoFactorController.channelIsOn(channel, request: request) else {
                throw Problem(
                    status: 409, code: .conflict, title: "\(channel.rawValue) codes are switched off on this server",
                    detail: "A new \(field) cannot be confirmed without sending it a code.")
            }
            if channel == .email, destination != user.email,
                try await User.query(on: request.db).filter(\.$email == destination).count() > 0
            {
                throw Self.emailTaken
            }
            let response = try Response.json(
                try await OneTimeCodeService.send(
                    channel, purpose: .changeDestination, to: destination, userID: userID, flowID: nil, request: request
                ))
            response.status = .accepted
            return response
        }
        let confirmed = try await OneTimeCodeService.verify(
            code, channel: channel, purpose: .changeDestination, userID: userID, flowID: nil, request: request)
        guard confirmed == destination else {
            throw Problem(
                status: 409, code: .conflict, title: "The code was sent elsewhere",
                detail: "That code confirms a different \(field); ask for a new code for this one.",
                errors: [field: "does not match the one the code was sent to"])
        }
        if channel == .sms { user.phone = destination } else { user.email = destination }
        user.updatedAt = request.twofold.clock.now()
        do {
            try await user.update(on: request.db)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw Self.emailTaken
        }
        try await AuditLog.record(
            channel == .sms ? .phoneChanged : .emailChanged, user: userID,
            detail: Masking.destination(destination, channel: channel), request: request)
        return try Response.json(user.dto)
    }

    static let emailTaken = Problem(
        status: 409, code: .conflict, title: "Address in use",
        detail: "Another account uses that email address.", errors: ["email": "is in use"])
}
