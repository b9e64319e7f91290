import Foundation
import TwofoldAPI
import Vapor

/// Passkeys (seed 000): registering one from the 2FA settings, managing them, signing in with one
/// and nothing else (conditional UI), and the related origins browsers ask for. A passkey as the
/// second step of a login flow is `SecondStepController`'s; as a step-up, `AuthController`'s.
struct PasskeyController: EndpointCollection {
    let clock: ServerClock
    let audit: Auditor
    let sessions: SessionService
    let users: any UserStore
    let backupCodes: BackupCodeService
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy
    let passkeys: PasskeyService
    let rateLimiter: RateLimiter
    let rules: ProductRules

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
            RelatedOrigins(
                origins: passkeys.settings.origins.filter { $0.hasPrefix("https://") || $0.hasPrefix("http://") }))
    }

    /// Options for registering a passkey. Once the account has a second factor, adding one needs
    /// a step-up (issue S), asked here and again at verify.
    @Sendable func registerOptions(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        try await policy.require(.add(kind: .webauthn), caller: request.caller, user: user)
        let body =
            request.body.data == nil
            ? PasskeyRegistrationOptionsRequest() : try request.decodeJSONBody(PasskeyRegistrationOptionsRequest.self)
        return try Response.json(try await passkeys.creationOptions(for: user, hints: body.hints))
    }

    @Sendable func registerVerify(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let body = try request.decodeJSONBody(PasskeyRegistrationRequest.self)
        try await policy.require(.add(kind: .webauthn), caller: request.caller, user: user)
        // The first second factor also hands out the backup codes. Both are recorded on this
        // session before the passkey is stored, so it never vouches for this session.
        let hadBackupCodes = try await backupCodes.exist(for: user.id)
        let name = FactorChanges.factorName(
            method: .webauthn, credentialID: PasskeyService.canonicalID(body.credential.id))
        try await factorChanges.recordAdding(name, withNewBackupCodes: !hadBackupCodes, caller: request.caller)
        let passkey = try await passkeys.register(
            body.credential, name: body.name, requireUserPresence: body.automaticUpgrade != true, user: user,
            origin: request.origin)
        let codes: [String]? = hadBackupCodes ? nil : try await backupCodes.regenerate(for: user.id)
        // Named by its provider, when and from where, never by the name its adder chose (issue T).
        try await factorChanges.notifyAdded(
            "A passkey from \(PasskeyService.dto(passkey).provider ?? "an unknown provider"), "
                + "added \(FactorChanges.moment(passkey.createdAt)) from \(request.origin.address ?? "an unknown address"),",
            user: user)
        return try Response.json(
            PasskeyRegisteredResponse(
                credential: PasskeyService.dto(passkey), backupCodes: codes, serverTime: clock.now()))
    }

    @Sendable func list(request: Request) async throws -> Response {
        try Response.json(PasskeysResponse(credentials: try await passkeys.list(userID: request.caller.userID)))
    }

    @Sendable func rename(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let userID = user.id
        let body = try request.decodeJSONBody(PasskeyRenameRequest.self)
        try await policy.require(.configure, caller: request.caller, user: user)
        return try Response.json(
            try await passkeys.rename(try credentialID(request), userID: userID, to: body.name))
    }

    /// Needs a step-up; deleting the last factor purges backup codes and remembered devices, as
    /// for every factor.
    @Sendable func delete(request: Request) async throws -> Response {
        let user = try await request.currentUser(in: users)
        let userID = user.id
        let id = try credentialID(request)
        try await policy.require(
            .remove(proof: FactorChanges.factorName(method: .webauthn, credentialID: id)), caller: request.caller,
            user: user)
        try await passkeys.delete(id, userID: userID, origin: request.origin)
        try await secondFactors.purgeIfNoneLeft(userID: userID, origin: request.origin)
        return try Response.json(SuccessResponse())
    }

    /// Passwordless: a challenge and no credentials named, so the browser offers the
    /// discoverable passkeys it holds for this RP ID (autofill). The body is ignored. Anyone may
    /// ask, so each address shares the password sign-in's throttle: the challenges stored stay
    /// bounded.
    @Sendable func signInOptions(request: Request) async throws -> Response {
        try await rateLimiter.require(
            RateLimiter.signInKey(address: request.clientAddress), rule: .init(rules.loginPerAddress), now: clock.now())
        return try Response.json(try await passkeys.requestOptions(.signIn, userID: nil, flowID: nil))
    }

    /// Passwordless: the passkey's `userHandle` names the account; a verified user makes it a
    /// full sign-in (`amr` `swk`/`hwk` and `mfa`).
    @Sendable func signInVerify(request: Request) async throws -> Response {
        let body = try request.decodeJSONBody(PasskeySignInRequest.self)
        // Anyone may send one, and each costs a signature check: the address's sign-in
        // throttle bounds them, as it bounds the options (issue T).
        try await rateLimiter.require(
            RateLimiter.signInKey(address: request.clientAddress), rule: .init(rules.loginPerAddress), now: clock.now())
        let verified = try await passkeys.verify(
            body.credential, purpose: .signIn, userID: nil, flowID: nil, origin: request.origin)
        guard let user = try await users.user(id: verified.passkey.userID) else {
            throw PasskeyService.refusal("unknown_credential", "the account this passkey was for no longer exists")
        }
        // A locked account is refused before the challenge and the counter are used.
        guard user.status == .active else { throw Problem.accountLocked }
        let proof = try await passkeys.commit(verified, origin: request.origin)
        let tokens = try await sessions.start(
            user: user.dto, methods: proof.userVerified ? [proof.amr, "mfa"] : [proof.amr],
            proofs: [FactorChanges.factorName(method: .webauthn, credentialID: verified.passkey.credentialID)],
            origin: request.origin)
        try await audit.record(
            .loginSucceeded, user: user.id, detail: "passkey (\(proof.amr))", origin: request.origin)
        return try Response.json(tokens)
    }

    private func credentialID(_ request: Request) throws -> String {
        guard let text = request.parameters.get("credentialID"), !text.isEmpty, text.count <= 1400 else {
            throw PasskeyService.notFound
        }
        return PasskeyService.canonicalID(text)
    }
}
