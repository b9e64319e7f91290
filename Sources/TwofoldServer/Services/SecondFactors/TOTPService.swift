import Foundation
import TwofoldAPI
import TwofoldCore

/// Authenticator apps (seed 000): setup, confirmation, and checking codes with replay protection.
/// Built with what it uses and given values, never a request.
struct TOTPService: Sendable {
    static let factor = FactorMethod.totp.rawValue

    let store: any TOTPCredentialStore
    let guards: FactorGuard
    let secrets: SecretBox
    let clock: ServerClock
    let issuer: String
    let pendingLifetime: TimeInterval

    /// The user's confirmed secret, if any.
    func active(for userID: UUID) async throws -> TOTPCredentialRecord? {
        try await store.credential(userID: userID, status: .active)
    }

    /// Starts setup: a new random 160-bit secret, pending for 10 minutes. An earlier pending
    /// secret is replaced; an active one must be removed first.
    func setup(userID: UUID, account: String) async throws -> TOTPSetupResponse {
        let now = clock.now()
        if try await active(for: userID) != nil {
            throw Problem(
                status: 409, code: .conflict, title: "Authenticator app already enabled",
                detail: "Remove the current authenticator app before adding another.")
        }
        let secret = SecureRandom.bytes(20)
        let pending = TOTPCredentialRecord(
            id: SecureRandom.timeOrderedUUID(at: now), userID: userID, status: .pending,
            secretCiphertext: try secrets.seal(secret, boundTo: userID), createdAt: now,
            expiresAt: now.addingTimeInterval(pendingLifetime))
        try await store.replace(with: pending)
        return try answer(secret: secret, account: account, expiresAt: pending.expiresAt, now: now)
    }

    /// The setup still waiting for its first code, as `setup` answered it (the same secret):
    /// shown again beside a wrong code, so one typo does not start the setup over. `nil` when
    /// none waits, or it expired.
    func pendingSetup(userID: UUID, account: String) async throws -> TOTPSetupResponse? {
        let now = clock.now()
        guard let pending = try await store.credential(userID: userID, status: .pending),
            pending.expiresAt > now
        else { return nil }
        let secret = try secrets.open(pending.secretCiphertext, boundTo: userID)
        return try answer(secret: secret, account: account, expiresAt: pending.expiresAt, now: now)
    }

    private func answer(secret: [UInt8], account: String, expiresAt: Date, now: Date) throws -> TOTPSetupResponse {
        let uri = try OTPAuthURI(issuer: issuer, account: account, secret: secret)
        let qr = try QRCode(text: uri.string, errorCorrection: .medium)
        return TOTPSetupResponse(
            secret: Base32.encode(secret), otpauthUri: uri.string, qrCodeSvg: qr.svg(),
            expiresAt: expiresAt, serverTime: now)
    }

    /// An authenticator app for an account the command line creates (`admin create`, issue V
    /// item 5): active at once, its secret shown once to the operator there. No code confirms it,
    /// as no app holds it yet; the account's first sign-in asks for one.
    func enableForNewAccount(userID: UUID, account: String) async throws -> TOTPSetupResponse {
        let setup = try await setup(userID: userID, account: account)
        guard let pending = try await store.credential(userID: userID, status: .pending),
            try await store.activate(credentialID: pending.id, now: clock.now(), addedBy: nil)
        else {
            throw Problem(
                status: 409, code: .conflict, title: "No authenticator app being set up",
                detail: "This setup was completed or replaced meanwhile.")
        }
        return setup
    }

    /// Confirms the pending secret with a code from the app: it becomes the user's active secret,
    /// while `addedBy` (the session adding it) is live.
    func confirm(_ code: String, userID: UUID, origin: RequestOrigin, addedBy: AddingSession?) async throws {
        let code = try InputValidation.code(code, for: .totp)
        guard let pending = try await store.credential(userID: userID, status: .pending) else {
            throw Problem(
                status: 409, code: .conflict, title: "No authenticator app being set up",
                detail: "Start the authenticator app's setup again.")
        }
        guard pending.expiresAt > clock.now() else {
            try await store.deleteAll(userID: userID)
            throw Problem(
                status: 410, code: .expired, title: "Setup expired",
                detail: "More than \(pendingLifetime.inWords) passed since setup; start again.")
        }
        try await check(code, credential: pending, origin: origin)
        guard try await store.activate(credentialID: pending.id, now: clock.now(), addedBy: addedBy) else {
            throw Problem(
                status: 409, code: .conflict, title: "No authenticator app being set up",
                detail: "This setup was completed or replaced meanwhile.")
        }
    }

    /// Removes the user's authenticator app; whether there was an active one.
    func remove(userID: UUID) async throws -> Bool {
        guard try await active(for: userID) != nil else { return false }
        try await store.deleteAll(userID: userID)
        return true
    }

    /// Checks `code` for `credential` under the factor guard and claims its time step, so one code
    /// (one step) is accepted once however many requests race. Throws the factor's problems.
    func check(_ code: String, credential: TOTPCredentialRecord, origin: RequestOrigin) async throws {
        let code = try InputValidation.code(code, for: .totp)
        let secret = TOTPSecret(credential)
        guard let step = try matchingStep(code, secret: secret) else {
            if try isUsedStep(code, secret: secret) { throw Self.replayed }
            try await refuse(userID: secret.userID, origin: origin)
        }
        try await settle(step, secret: secret)
    }

    /// The time step `code` is right for (the current one or either neighbour, after the last
    /// one used), or `nil`: the computation alone, which the second step of a sign-in does before
    /// its unit of work so that the database's thread does not. Deciding is `settle` or `refuse`.
    func matchingStep(_ code: String, secret: TOTPSecret) throws -> UInt64? {
        let lastUsed = secret.lastUsedStep.map { UInt64(clamping: $0) }
        return try generator(for: secret).verify(CodeFormatter.strip(code), at: clock.now(), window: 1, after: lastUsed)
    }

    /// The code generator of `secret`, its key opened.
    private func generator(for secret: TOTPSecret) throws -> TwofoldCore.TOTP {
        let key = try secrets.open(secret.ciphertext, boundTo: secret.userID)
        return try TOTP(
            secret: key, algorithm: OTPAlgorithm(name: secret.algorithm) ?? .sha1,
            digits: try OTPDigits(secret.digits), period: try TOTPPeriod(secret.period))
    }

    /// Records a wrong code, in the order every check takes: the attempt slot first (refused
    /// with `429` when the factor is locked or all its slots are taken), so no more codes are
    /// judged before the lock than the guard allows and the verdict is told only then; then the
    /// failure.
    func refuse(userID: UUID, origin: RequestOrigin) async throws -> Never {
        try await guards.begin(Self.factor, userID: userID)
        try await guards.failed(Self.factor, userID: userID, origin: origin)
    }

    /// Records a code right for `step`: refused while the factor is locked (`FactorGuard.admit`:
    /// the code was judged before, so only the verdict waits for the lock); then the time step
    /// is claimed with one conditional update, and only a claimed step starts the count again.
    func settle(_ step: UInt64, secret: TOTPSecret) async throws {
        let counted = try await guards.admit(Self.factor, userID: secret.userID)
        // The step already used: a duplicate of a code just accepted (or a replay of one seen),
        // which guesses nothing, so it is refused without counting (issue S item 11).
        guard try await store.claimStep(Int64(step), credentialID: secret.id) else { throw Self.replayed }
        if counted { try await guards.succeeded(Self.factor, userID: secret.userID) }
    }

    /// Why a code judged right for its step could not claim it: the factor is locked (as
    /// `settle` refuses it), else the step was used meanwhile.
    func explainRefusal(secret: TOTPSecret) async throws -> Never {
        _ = try await guards.admit(Self.factor, userID: secret.userID)
        throw Self.replayed
    }

    static let replayed = Problem(
        status: 409, code: .alreadyUsed, title: "Code already used",
        detail: "That code was already used; wait for the next one.")

    /// Whether `code`, which matched no step after the last one used, is the code of a step
    /// already used: a duplicate, refused as `replayed` and not counted as a guess.
    func isUsedStep(_ code: String, secret: TOTPSecret) throws -> Bool {
        guard let lastUsed = secret.lastUsedStep.map({ UInt64(clamping: $0) }),
            let step = try? generator(for: secret).verify(
                CodeFormatter.strip(code), at: clock.now(), window: 1, after: nil)
        else { return false }
        return step <= lastUsed
    }
}
