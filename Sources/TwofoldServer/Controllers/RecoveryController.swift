import Foundation
import TwofoldAPI
import Vapor

/// Account recovery over JSON (`AccountRecovery`): the person's steps, and the administrators'
/// queue and decisions.
struct RecoveryController: EndpointCollection {
    let recovery: AccountRecovery
    let callers: Callers

    func boot(routes: EndpointRoutes) {
        // A document makes this request larger than any other: up to its limit in base64.
        routes.on(
            API.Recovery.start, bodyLimit: (RecoveryDocument.maximumBytes / 3 + 1) * 4 + 16 * 1024, use: start)
        routes.on(API.Recovery.status, use: status)
        routes.on(API.Recovery.verifyEmail, use: verifyEmail)
        routes.on(API.Recovery.cancel, use: cancel)
        routes.on(API.Recovery.redeem, use: redeem)
        routes.on(API.Admin.recoveryRequests, use: queue)
        routes.on(API.Admin.recoveryDocument, use: document)
        routes.on(API.Admin.approveRecovery, use: approve)
        routes.on(API.Admin.denyRecovery, use: deny)
    }

    @Sendable func start(request: Request, body: RecoveryStartRequest) async throws -> RecoveryStatus {
        try await recovery.start(body, origin: request.origin)
    }

    @Sendable func status(request: Request, _: NoContent) async throws -> RecoveryStatus {
        try await recovery.status(request.parameters.get("recoveryID", as: UUID.self))
    }

    @Sendable func verifyEmail(request: Request, body: CodeRequest) async throws -> RecoveryStatus {
        try await recovery.proveEmail(
            request.parameters.get("recoveryID", as: UUID.self), code: body.code, origin: request.origin)
    }

    @Sendable func cancel(request: Request, body: RecoveryCancelRequest) async throws -> RecoveryStatus {
        try await recovery.cancel(token: body.token, origin: request.origin)
    }

    @Sendable func redeem(request: Request, body: RecoveryRedeemRequest) async throws -> AuthTokensResponse {
        try await recovery.redeem(pass: body.pass, origin: request.origin)
    }

    @Sendable func queue(request: Request, _: NoContent) async throws -> AdminRecoveryResponse {
        try await recovery.queue(try request.query())
    }

    @Sendable func document(request: Request, _: NoContent) async throws -> FileContents {
        try await recovery.document(
            request.parameters.get("recoveryID", as: UUID.self), by: try request.caller.userID, origin: request.origin)
    }

    @Sendable func approve(request: Request, body: RecoveryDecisionRequest) async throws -> AdminRecoveryRequest {
        try await decide(request, body, approve: true)
    }

    @Sendable func deny(request: Request, body: RecoveryDecisionRequest) async throws -> AdminRecoveryRequest {
        try await decide(request, body, approve: false)
    }

    private func decide(_ request: Request, _ body: RecoveryDecisionRequest, approve: Bool) async throws
        -> AdminRecoveryRequest
    {
        try await recovery.decide(
            request.parameters.get("recoveryID", as: UUID.self), approve: approve, note: body.note,
            by: try request.caller, adminUser: try await request.currentUser(in: callers), origin: request.origin)
    }
}

/// Holds a session a recovery pass began to setting up a factor (`API.Recovery.beforeFactorSetup`)
/// while the account has none: every other endpoint a signed-in caller reaches is refused with
/// `403 factor_setup_required`. Runs after `BearerAuthentication`; costs nothing for other sessions.
struct RecoveryGate: AsyncMiddleware {
    let callers: Callers
    let secondFactors: SecondFactors

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let caller = try request.caller
        if caller.proof.isRecovery {
            guard try await !mustSetUpFactor(caller, user: try await request.currentUser(in: callers)) else {
                throw Self.refusal
            }
        }
        return try await next.respond(to: request)
    }

    /// The rule, for the API and the pages alike: a session a recovery pass began, while the
    /// account has no second factor, may only set one up.
    func mustSetUpFactor(_ caller: AuthenticatedUser, user: User) async throws -> Bool {
        guard caller.proof.isRecovery else { return false }
        return !(try await secondFactors.credentials(for: user).hasSecondFactor)
    }

    static let refusal = Problem(
        status: 403, code: .factorSetupRequired, title: "Set up a sign-in method first",
        detail: "You signed in with a recovery pass: set up an authenticator app, a passkey, or SMS or email codes "
            + "before anything else.")
}
