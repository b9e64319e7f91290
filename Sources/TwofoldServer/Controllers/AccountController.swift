import Foundation
import TwofoldAPI
import Vapor

/// The signed-in user's own account over JSON: read it, change the password, change the phone
/// number or email address that SMS and email codes go to (`AccountChanges`).
struct AccountController: EndpointCollection {
    let changes: AccountChanges
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        routes.on(API.Account.show, use: show)
        routes.on(API.Account.changePassword, use: changePassword)
        routes.on(API.Account.changePhone, reply: changePhone)
        routes.on(API.Account.changeEmail, reply: changeEmail)
    }

    @Sendable func show(request: Request, _: NoContent) async throws -> UserDTO {
        try await request.currentUser(in: callers).dto
    }

    @Sendable func changePassword(request: Request, body: PasswordChangeRequest) async throws -> SuccessResponse {
        let caller = try request.caller
        let user = try await request.currentUser(in: callers)
        try await changes.changePassword(body, user: user, caller: caller, origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func changePhone(
        request: Request, body: PhoneChangeRequest
    ) async throws -> Reply<DestinationChangeOutcome> {
        guard let number = InputValidation.phone(body.phoneNumber) else {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        return try await changeDestination(.sms, to: number, code: body.code, request: request)
    }

    /// As `changePhone`, for the email address (which is also the sign-in name).
    @Sendable func changeEmail(
        request: Request, body: EmailChangeRequest
    ) async throws -> Reply<DestinationChangeOutcome> {
        guard let address = InputValidation.email(body.email) else {
            throw InputValidation.failure(["email": "must be an email address"])
        }
        return try await changeDestination(.email, to: address, code: body.code, request: request)
    }

    /// `202` with the code's answer at step 1, `200` with the account at step 2.
    private func changeDestination(
        _ channel: DeliveryChannel, to destination: String, code: String?, request: Request
    ) async throws -> Reply<DestinationChangeOutcome> {
        let outcome = try await changes.changeDestination(
            channel, to: destination, code: code, user: try await request.currentUser(in: callers),
            caller: try request.caller, origin: request.origin)
        switch outcome {
        case .codeSent: return Reply(answer: outcome, status: .accepted)
        case .changed: return Reply(answer: outcome, status: .ok)
        }
    }
}
