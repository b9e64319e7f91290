import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldCore
import Vapor

/// Authenticator apps (seed 000): setup, confirmation, and checking codes with replay protection.
enum TOTPService {
    static let factor = "totp"

    /// The user's confirmed secret, if any, read with one SQL statement (every TOTP check reads it).
    static func active(for userID: UUID, request: Request) async throws -> TOTPCredential? {
        try await request.rows(
            Statement(
                "SELECT \(TOTPCredential.columns) FROM totp_credentials WHERE user_id = ? AND status = 'active'",
                .uuid(userID)),
            TOTPCredential.init(row:)
        ).first
    }

    /// Starts setup: a new random 160-bit secret, pending for 10 minutes. An earlier pending
    /// secret is replaced; an active one must be removed first.
    static func setup(for user: User, request: Request) async throws -> TOTPSetupResponse {
        let userID = try user.requireID()
        let now = request.twofold.clock.now()
        if try await active(for: userID, request: request) != nil {
            throw Problem(
                status: 409, code: .conflict, title: "Authenticator app already enabled",
                detail: "Remove the current authenticator app (DELETE /api/v1/2fa/totp) before adding another.")
        }
        let secret = SecureRandom.bytes(20)
        let sealed = try request.twofold.secrets.seal(secret, boundTo: userID)
        try await TOTPCredential.query(on: request.db).filter(\.$userID == userID).delete()
        let credential = TOTPCredential(
            userID: userID, secretCiphertext: sealed, now: now,
            expiresAt: now.addingTimeInterval(request.twofold.rules.pendingTOTPLifetime))
        try await credential.create(on: request.db)
        let uri = try OTPAuthURI(
            issuer: request.twofold.configuration.totpIssuer, account: user.email, secret: secret)
        let qr = try QRCode(text: uri.string, errorCorrection: .medium)
        return TOTPSetupResponse(
            secret: Base32.encode(secret), otpauthUri: uri.string, qrCodeSvg: qr.svg(), expiresAt: credential.expiresAt,
            serverTime: now)
    }

    /// A secret as codes are checked against it: plain values, from the model
    /// (`init(_:)`) or read with the login flow (`PendingSecondStep`).
    struct Secret: Sendable {
        let id: UUID
        let userID: UUID
        /// As `TOTPCredential.secretCiphertext`.
        let ciphertext: String
        let algorithm: String
        let digits: Int
        let period: Int
        let lastUsedStep: Int64?
    }

    /// Checks `code` for `credential` under the factor guard and claims its time step, so one code
    /// (one step) is accepted once however many requests race. Throws the factor's problems.
    static func check(_ code: String, credential: TOTPCredential, request: Request) async throws {
        let secret = try Secret(credential)
        guard let step = try matchingStep(code, secret: secret, request: request) else {
            if try isUsedStep(code, secret: secret, request: request) { throw replayed }
            try await refuse(userID: secret.userID, request: request)
        }
        try await settle(step, secret: secret, request: request)
    }

    /// The time step `code` is right for (the current one or either neighbour, after the last
    /// one used), or `nil`: the computation alone, which the second step of a sign-in does before
    /// its unit of work so that the database's thread does not. Deciding is `settle` or `refuse`.
    static func matchingStep(_ code: String, secret: Secret, request: Request) throws -> UInt64? {
        let lastUsed = secret.lastUsedStep.map { UInt64(clamping: $0) }
        return try generator(for: secret, request: request)
            .verify(CodeFormatter.strip(code), at: request.twofold.clock.now(), window: 1, after: lastUsed)
    }

    /// The code generator of `secret`, its key opened.
    private static func generator(for secret: Secret, request: Request) throws -> TwofoldCore.TOTP {
        let key = try request.twofold.secrets.open(secret.ciphertext, boundTo: secret.userID)
        return try TOTP(
            secret: key, algorithm: OTPAlgorithm(name: secret.algorithm) ?? .sha1,
            digits: try OTPDigits(secret.digits), period: try TOTPPeriod(secret.period))
    }

    /// Records a wrong code, in the order every check takes: the attempt slot first (refused
    /// with `429` when the factor is locked or all its slots are taken), so no more codes are
    /// judged before the lock than the guard allows and the verdict is told only then; then the
    /// failure.
    static func refuse(userID: UUID, request: Request) async throws -> Never {
        try await request.twofold.guards.begin(factor, userID: userID)
        try await request.twofold.guards.failed(factor, userID: userID, origin: request.origin)
    }

    /// Records a code right for `step`: refused while the factor is locked (`FactorGuard.admit`:
    /// the code was judged before, so only the verdict waits for the lock); then the time step
    /// is claimed with one conditional update (a step already used is a replay, refused as a
    /// wrong code), and only a claimed step starts the count again.
    static func settle(_ step: UInt64, secret: Secret, request: Request) async throws {
        let userID = secret.userID
        let counted = try await request.twofold.guards.admit(factor, userID: userID)
        let claimed = try await request.changes(
            Statement(
                """
                UPDATE totp_credentials SET last_used_step = ?
                WHERE id = ? AND (last_used_step IS NULL OR last_used_step < ?)
                """, .integer(Int(step)), .uuid(secret.id), .integer(Int(step))))
        // The step already used: a duplicate of a code just accepted (or a replay of one seen),
        // which guesses nothing, so it is refused without counting (issue S item 11).
        guard claimed > 0 else { throw replayed }
        if counted { try await request.twofold.guards.succeeded(factor, userID: userID) }
    }

    static let replayed = Problem(
        status: 409, code: .alreadyUsed, title: "Code already used",
        detail: "That code was already used; wait for the next one.")

    /// Whether `code`, which matched no step after the last one used, is the code of a step
    /// already used: a duplicate, refused as `replayed` and not counted as a guess.
    static func isUsedStep(_ code: String, secret: Secret, request: Request) throws -> Bool {
        guard let lastUsed = secret.lastUsedStep.map({ UInt64(clamping: $0) }),
            let step = try? generator(for: secret, request: request)
                .verify(CodeFormatter.strip(code), at: request.twofold.clock.now(), window: 1, after: nil)
        else { return false }
        return step <= lastUsed
    }
}

extension TOTPService.Secret {
    init(_ credential: TOTPCredential) throws {
        self.init(
            id: try credential.requireID(), userID: credential.userID, ciphertext: credential.secretCiphertext,
            algorithm: credential.algorithm, digits: credential.digits, period: credential.period,
            lastUsedStep: credential.lastUsedStep)
    }
}
