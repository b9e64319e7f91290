import Foundation
import TwofoldAPI
import Vapor

/// The signed-in user's own account over JSON: read it, change the password, change the phone
/// number or email address that SMS and email codes go to (`AccountChanges`).
struct AccountController: EndpointCollection {
    let changes: AccountChanges
    let users: any UserStore

    func boot(routes: EndpointRoutes) {
        routes.on(API.Account.show, use: show)
        routes.on(API.Account.changePassword, use: changePassword)
        routes.on(API.Account.changePhone, use: changePhone)
        routes.on(API.Account.changeEmail, use: changeEmail)
    }

    @Sendable func show(request: Request) async throws -> Response {
        try Response.json(try await request.currentUser(in: users).dto)
    }

    @Sendable func changePassword(request: Request) async throws -> Response {
        let caller = try request.caller
        let user = try await request.currentUser(in: users)
        let body = try request.content.decode(PasswordChangeRequest.self)
        try await changes.changePassword(body, user: user, caller: caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

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

    /// `202` with the code's answer at step 1, `200` with the account at step 2.
    private func changeDestination(
        _ channel: DeliveryChannel, to destination: String, code: String?, request: Request
    ) async throws -> Response {
        switch try await changes.changeDestination(
            channel, to: destination, code: code, user: try await request.currentUser(in: users),
            caller: try request.caller, origin: request.origin)
        {
        case .codeSent(let sent):
            let response = try Response.json(sent)
            response.status = .accepted
            return response
        case .changed(let user):
            return try Response.json(user)
        }
    }
}
