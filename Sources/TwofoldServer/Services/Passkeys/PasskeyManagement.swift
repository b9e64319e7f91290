import Foundation
import TwofoldAPI

/// Passkeys on the signed-in person's account (seed 000), as a use case: registering one (the
/// first second factor also hands out backup codes; the owner is told), listing, renaming and
/// deleting them. Every change asks `SignInPolicy`.
struct PasskeyManagement: Sendable {
    let clock: ServerClock
    let backupCodes: BackupCodeService
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy
    let passkeys: PasskeyService

    /// Options for registering a passkey. Once the account has a second factor, adding one needs
    /// a step-up (issue S), asked here and again at `register`.
    func creationOptions(
        user: User, caller: AuthenticatedUser, hints: [String]?
    ) async throws -> PasskeyCreationOptions {
        try await policy.require(.add(kind: .webauthn), caller: caller, user: user)
        return try await passkeys.creationOptions(for: user, hints: hints)
    }

    func register(
        _ body: PasskeyRegistrationRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> PasskeyRegisteredResponse {
        try await policy.require(.add(kind: .webauthn), caller: caller, user: user)
        // The first second factor also hands out the backup codes. Both are recorded on this
        // session before the passkey is stored, so it never vouches for this session.
        let hadBackupCodes = try await backupCodes.exist(for: user.id)
        let name = FactorChanges.factorName(
            method: .webauthn, credentialID: PasskeyService.canonicalID(body.credential.id))
        try await factorChanges.recordAdding(name, withNewBackupCodes: !hadBackupCodes, caller: caller)
        let passkey = try await passkeys.register(
            body.credential, name: body.name, requireUserPresence: body.automaticUpgrade != true, user: user,
            origin: origin, addedBy: caller.adding)
        let codes: [String]? =
            hadBackupCodes
            ? nil : try await backupCodes.regenerate(for: user.id, addedBy: caller.adding)
        // Named by its provider, when and from where, never by the name its adder chose (issue T).
        try await factorChanges.notifyAdded(
            "A passkey from \(PasskeyService.dto(passkey).provider ?? "an unknown provider"), "
                + "added \(FactorChanges.moment(passkey.createdAt)) from \(origin.address ?? "an unknown address"),",
            user: user)
        return PasskeyRegisteredResponse(
            credential: PasskeyService.dto(passkey), backupCodes: codes, serverTime: clock.now())
    }

    func list(userID: UUID) async throws -> PasskeysResponse {
        PasskeysResponse(credentials: try await passkeys.list(userID: userID))
    }

    func rename(
        _ credentialID: () throws -> String, to name: String, user: User, caller: AuthenticatedUser
    ) async throws -> PasskeyDTO {
        try await policy.require(.configure, caller: caller, user: user)
        return try await passkeys.rename(try credentialID(), userID: user.id, to: name)
    }

    /// Needs a step-up; deleting the last factor purges backup codes and remembered devices, as
    /// for every factor.
    func delete(_ id: String, user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws {
        try await policy.require(
            .remove(proof: FactorChanges.factorName(method: .webauthn, credentialID: id)), caller: caller, user: user)
        try await passkeys.delete(id, userID: user.id, origin: origin)
        try await factorChanges.removed(
            "A passkey", factors: [Proof.passkey(PasskeyService.canonicalID(id)).factor], userID: user.id,
            keeping: caller.sessionID, origin: origin)
    }
}

/// Signing in with a passkey and nothing else (conditional UI), as a use case. Anyone may ask,
/// so each address shares the password sign-in's throttle: the challenges stored and the
/// signatures checked stay bounded (issue T).
struct PasswordlessSignIn: Sendable {
    let clock: ServerClock
    let audit: Auditor
    let sessions: SessionService
    let users: any UserStore
    let passkeys: PasskeyService
    let rateLimiter: RateLimiter
    let rules: ProductRules

    /// A challenge and no credentials named, so the browser offers the discoverable passkeys it
    /// holds for this RP ID.
    func options(address: String?) async throws -> PasskeyRequestOptions {
        try await throttle(address)
        return try await passkeys.requestOptions(.signIn, userID: nil, flowID: nil)
    }

    /// The passkey's `userHandle` names the account; a verified user makes it a full sign-in
    /// (`amr` `swk`/`hwk` and `mfa`).
    func verify(_ credential: AuthenticationCredential, address: String?, origin: RequestOrigin) async throws
        -> AuthTokensResponse
    {
        try await throttle(address)
        let verified = try await passkeys.verify(credential, purpose: .signIn, userID: nil, flowID: nil, origin: origin)
        guard let user = try await users.user(id: verified.passkey.userID) else {
            throw PasskeyService.refusal("unknown_credential", "the account this passkey was for no longer exists")
        }
        // A locked account is refused before the challenge and the counter are used.
        guard user.status == .active else { throw Problem.accountLocked }
        let proof = try await passkeys.commit(verified, origin: origin)
        var tokens = try await sessions.start(
            user: user, methods: proof.userVerified ? [proof.amr, "mfa"] : [proof.amr],
            proofs: [.passkey(verified.passkey.credentialID)],
            origin: origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "passkey (\(proof.amr))", origin: origin)
        tokens.passkeyName = verified.passkey.name
        return tokens
    }

    private func throttle(_ address: String?) async throws {
        try await rateLimiter.require(
            RateLimiter.signInKey(address: address), rule: .init(rules.loginPerAddress), now: clock.now())
    }
}
