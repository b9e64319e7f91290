import Foundation
import TwofoldAPI
import Vapor

/// Passkeys (seed 000): registering one from the 2FA settings, managing them, signing in with one
/// and nothing else (conditional UI), and the related origins browsers ask for. A passkey as the
/// second step of a login flow is `SecondStep`'s; as a step-up, `StepUp`'s. The use cases are
/// `PasskeyManagement` and `PasswordlessSignIn`.
struct PasskeyController: EndpointCollection {
    let management: PasskeyManagement
    let passwordless: PasswordlessSignIn
    let users: any UserStore
    /// The origins passkeys may be used from (`TWOFOLD_WEBAUTHN_ORIGINS`).
    let origins: [String]

    func boot(routes: EndpointRoutes) {
        routes.on(API.Operations.relatedOrigins, use: relatedOrigins)
        routes.on(API.Passkeys.registerOptions, use: registerOptions)
        routes.on(API.Passkeys.registerVerify, use: registerVerify)
        routes.on(API.Passkeys.list, use: list)
        routes.on(API.Passkeys.rename, use: rename)
        routes.on(API.Passkeys.delete, use: delete)
        routes.on(API.Passkeys.signInOptions, use: signInOptions)
        routes.on(API.Passkeys.signInVerify, use: signInVerify)
    }

    /// WebAuthn related origin requests: the configured web origins (native app origins are not
    /// for browsers).
    @Sendable func relatedOrigins(request: Request) async throws -> Response {
        try Response.json(
            RelatedOrigins(origins: origins.filter { $0.hasPrefix("https://") || $0.hasPrefix("http://") }))
    }

    @Sendable func registerOptions(request: Request) async throws -> Response {
        try Response.json(
            try await management.creationOptions(
                user: try await request.currentUser(in: users), caller: try request.caller,
                hints: {
                    request.body.data == nil
                        ? nil : try request.decodeJSONBody(PasskeyRegistrationOptionsRequest.self).hints
                }))
    }

    @Sendable func registerVerify(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.decodeJSONBody(PasskeyRegistrationRequest.self)
        return try Response.json(
            try await management.register(body, user: user, caller: try request.caller, origin: request.origin))
    }

    @Sendable func list(request: Request) async throws -> Response {
        try Response.json(try await management.list(userID: try request.caller.userID))
    }

    @Sendable func rename(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.decodeJSONBody(PasskeyRenameRequest.self)
        return try Response.json(
            try await management.rename(
                { try credentialID(request) }, to: body.name, user: user, caller: try request.caller))
    }

    @Sendable func delete(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let id = try credentialID(request)
        try await management.delete(id, user: user, caller: try request.caller, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    @Sendable func signInOptions(request: Request) async throws -> Response {
        try Response.json(try await passwordless.options(address: request.clientAddress))
    }

    @Sendable func signInVerify(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeySignInRequest.self)
        return try Response.json(
            try await passwordless.verify(body.credential, address: request.clientAddress, origin: request.origin))
    }

    private func credentialID(_ request: Request) throws -> String {
        guard let text = request.parameters.get("credentialID"), !text.isEmpty, text.count <= 1400 else {
            throw PasskeyService.notFound
        }
        return PasskeyService.canonicalID(text)
    }
}
