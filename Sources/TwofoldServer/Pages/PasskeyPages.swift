import Foundation
import TwofoldAPI
import Vapor

/// What the pages' script sends to sign in with a passkey: the credential, and the login flow
/// when the passkey is a sign-in's second step.
struct PagePasskeySignIn: Content {
    var flow: String?
    var credential: AuthenticationCredential
    var trustDevice: Bool?
}

struct PagePasskeyOptionsRequest: Content {
    var flow: String?
}

/// A passkey as a step-up, and the page to go back to.
struct PagePasskeyStepUp: Content {
    var credential: AuthenticationCredential
    var next: String?
}

struct PagePasskeyAdd: Content {
    var credential: RegistrationCredential
    var name: String?
}

/// Where the script goes next, and the backup codes a first factor brings (shown once).
struct PagePasskeyAnswer: Content {
    var location: String
    var backupCodes: [String]?
}

extension PagesController {
    /// The script's JSON calls: the page's CSRF token in `X-CSRF-Token`, and answers as
    /// problem documents (the script shows their `detail`).
    private func checkScript(_ request: Request) throws {
        try browser.checkForm(request, token: request.headers.first(name: "X-CSRF-Token"))
    }

    /// The signed-in visitor of a script call (its CSRF token checked), under the pages' gate: a
    /// session a recovery pass began may only set up a factor (`settingUp`), as `signedIn` and
    /// the API's `RecoveryGate` have it. Problems, not detours: the script shows them.
    private func scriptVisitor(_ request: Request, settingUp: Bool = false) async throws -> BrowserSessions.Visitor {
        try checkScript(request)
        guard let visitor = try await browser.visitor(request) else {
            throw BearerAuthentication.unauthorized("Sign in first.")
        }
        if visitor.mustSetUpFactor, !settingUp { throw RecoveryGate.refusal }
        return visitor
    }

    private static func json(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: Response.jsonHeaders, body: .init(data: try Wire.encoder().encode(value)))
    }

    @Sendable func passkeySignInOptions(request: Request) async throws -> Response {
        try checkScript(request)
        let body = (try? request.content.decode(PagePasskeyOptionsRequest.self)) ?? PagePasskeyOptionsRequest()
        if let flow = body.flow {
            return try Self.json(try await secondStep.passkeyOptions(flow: flow))
        }
        return try Self.json(try await passwordless.options(address: request.clientAddress))
    }

    @Sendable func passkeySignIn(request: Request) async throws -> Response {
        try checkScript(request)
        let body = try request.decodeJSONBody(PagePasskeySignIn.self)
        let tokens: AuthTokensResponse
        var deviceToken: String?
        if let flow = body.flow {
            let signedIn = try await secondStep.complete(
                .init(flow: flow, method: .webauthn, passkey: body.credential, trustDevice: body.trustDevice ?? false),
                origin: request.origin, on: request.eventLoop)
            let answer = signedIn.answer
            tokens = answer.tokens
            deviceToken = signedIn.trustedDeviceToken
        } else {
            tokens = try await passwordless.verify(
                body.credential, address: request.clientAddress, origin: request.origin)
        }
        let response = try Self.json(PagePasskeyAnswer(location: Pages.accountSecurity.href(), backupCodes: nil))
        browser.begin(tokens, on: response)
        if let deviceToken {
            response.cookies[cookies.trustedDevice] = cookies.cookie(deviceToken, lifetime: trustedDeviceLifetime)
        }
        return response
    }

    @Sendable func stepUpPasskeyOptions(request: Request) async throws -> Response {
        let visitor = try await scriptVisitor(request)
        return try Self.json(try await stepUp.passkeyOptions(userID: visitor.user.id))
    }

    @Sendable func stepUpPasskey(request: Request) async throws -> Response {
        let visitor = try await scriptVisitor(request)
        let body = try request.decodeJSONBody(PagePasskeyStepUp.self)
        _ = try await stepUp.prove(
            StepUpRequest(method: .webauthn, credential: body.credential), caller: visitor.caller,
            origin: request.origin)
        return try Self.json(
            PagePasskeyAnswer(location: Self.safeNext(body.next) ?? Pages.accountSecurity.href(), backupCodes: nil))
    }

    @Sendable func passkeyAddOptions(request: Request) async throws -> Response {
        let visitor = try await scriptVisitor(request, settingUp: true)
        return try Self.json(
            try await passkeyManagement.creationOptions(user: visitor.user, caller: visitor.caller, hints: nil))
    }

    @Sendable func passkeyAdd(request: Request) async throws -> Response {
        let visitor = try await scriptVisitor(request, settingUp: true)
        let body = try request.decodeJSONBody(PagePasskeyAdd.self)
        let added = try await passkeyManagement.register(
            PasskeyRegistrationRequest(credential: body.credential, name: body.name), user: visitor.user,
            caller: visitor.caller, origin: request.origin)
        return try Self.json(PagePasskeyAnswer(location: Pages.accountSecurity.href(), backupCodes: added.backupCodes))
    }
}
