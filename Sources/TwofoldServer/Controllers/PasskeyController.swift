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
    let callers: Callers
    /// The origins passkeys may be used from (`TWOFOLD_WEBAUTHN_ORIGINS`).
    let origins: [String]
    /// The iOS apps this domain vouches for (`TWOFOLD_APPLE_APP_IDS`).
    let appleApps: [String]

    func boot(routes: EndpointRoutes) {
        routes.on(API.Operations.relatedOrigins, use: relatedOrigins)
        routes.on(API.Operations.appleAppSiteAssociation, use: appleAppSiteAssociation)
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
    @Sendable func relatedOrigins(request: Request, _: NoContent) async throws -> RelatedOrigins {
        RelatedOrigins(origins: origins.filter { $0.hasPrefix("https://") || $0.hasPrefix("http://") })
    }

    /// Apple's associated domains file: the configured apps' passkeys and the recovery email's
    /// link opening in them. Not found when no app is configured.
    @Sendable func appleAppSiteAssociation(request: Request, _: NoContent) async throws -> AppleAppSiteAssociation {
        guard !appleApps.isEmpty else {
            throw Problem(
                status: 404, code: .notFound, title: "Not found",
                detail: "This server vouches for no iOS app (TWOFOLD_APPLE_APP_IDS is not set).")
        }
        return AppleAppSiteAssociation(apps: appleApps, recoveryPath: "/" + Pages.recoveryPass.path)
    }

    /// The body may be left out (no hints).
    @Sendable func registerOptions(
        request: Request, body: PasskeyRegistrationOptionsRequest
    ) async throws -> PasskeyCreationOptions {
        try await management.creationOptions(
            user: try await request.currentUser(in: callers), caller: try request.caller, hints: body.hints)
    }

    @Sendable func registerVerify(
        request: Request, body: PasskeyRegistrationRequest
    ) async throws -> PasskeyRegisteredResponse {
        try await management.register(
            body, user: try await request.currentUser(in: callers), caller: try request.caller, origin: request.origin)
    }

    @Sendable func list(request: Request, _: NoContent) async throws -> PasskeysResponse {
        try await management.list(userID: try request.caller.userID)
    }

    @Sendable func rename(request: Request, body: PasskeyRenameRequest) async throws -> PasskeyDTO {
        try await management.rename(
            { try credentialID(request) }, to: body.name, user: try await request.currentUser(in: callers),
            caller: try request.caller)
    }

    @Sendable func delete(request: Request, _: NoContent) async throws -> SuccessResponse {
        let user = try await request.currentUser(in: callers)
        try await management.delete(
            try credentialID(request), user: user, caller: try request.caller, origin: request.origin)
        return SuccessResponse()
    }

    @Sendable func signInOptions(request: Request, _: NoContent) async throws -> PasskeyRequestOptions {
        try await passwordless.options(address: request.clientAddress)
    }

    @Sendable func signInVerify(request: Request, body: PasskeySignInRequest) async throws -> AuthTokensResponse {
        try await passwordless.verify(body.credential, address: request.clientAddress, origin: request.origin)
    }

    private func credentialID(_ request: Request) throws -> String {
        try PasskeyService.credentialID(request.parameters.get("credentialID"))
    }
}
