import Foundation
import TwofoldAPI

/// Makes passkeys for an account: `ASAuthorizationController` on Apple platforms, the virtual
/// phone in tests and the command-line tool.
public protocol PasskeyCreating: Sendable {
    /// A new passkey for `options`; throws `PasskeyCancelled` when the person declines.
    func registration(for options: PasskeyCreationOptions) async throws -> RegistrationCredential
}

/// Proves a factor again when the server asks for it (`403 step_up_required`): the app asks the
/// person for a code, the password or a passkey.
public protocol StepUpProviding: Sendable {
    /// A proof for `POST /auth/step-up`. `need` is the server's reason (`recentSecondFactor`,
    /// `recentPassword`, `otherProof`, …); `methods` are the account's second factors.
    func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest
}

/// What starting an authenticator app's setup gives the person: the secret to type or the QR
/// code to scan, until `expiresAt`.
public struct AuthenticatorSetup: Sendable, Equatable, Encodable, RedactedDescription {
    /// The shared secret in base32, for typing into the app.
    public let secret: String
    /// The `otpauth://totp/…` URI the QR code holds.
    public let otpauthURI: String
    /// The QR code of `otpauthURI`, as an SVG document.
    public let qrCodeSVG: String
    /// When the pending setup lapses unless confirmed.
    public let expiresAt: Date

    /// A setup as the server starts one (a preview's or a test's fixture).
    public init(secret: String, otpauthURI: String, qrCodeSVG: String, expiresAt: Date) {
        (self.secret, self.otpauthURI, self.qrCodeSVG, self.expiresAt) = (secret, otpauthURI, qrCodeSVG, expiresAt)
    }
}

/// The signed-in account's factors (seed 000's settings): authenticator app, passkeys, SMS and
/// email codes, backup codes. Every call carries a current access token from the
/// `SessionManager`; when the server asks for a step-up, the `StepUpProviding` gives a proof,
/// the session is stepped up, and the call is made again (`SessionManager.authorized`).
public actor AccountSecurity {
    private let session: SessionManager
    private let stepUp: (any StepUpProviding)?
    private let passkeyMaker: (any PasskeyCreating)?

    /// Calls made with `session`'s tokens; `stepUp` proves a factor when the server asks, and `passkeys` makes
    /// new passkeys (without it, `addPasskey(name:)` throws `PasskeyCancelled`).
    public init(
        session: SessionManager, stepUp: (any StepUpProviding)? = nil, passkeys: (any PasskeyCreating)? = nil
    ) {
        (self.session, self.stepUp, self.passkeyMaker) = (session, stepUp, passkeys)
    }

    private var client: APIClient { session.client }

    // MARK: Status

    /// The account's second factors as the server has them (`GET /2fa/status`).
    public func status() async throws -> TwoFactorStatus {
        try await authorized { [client] in try await client.send(API.TwoFactor.status, bearer: $0) }
    }

    // MARK: Authenticator app

    /// Starts an authenticator app's setup: the secret is pending until confirmed.
    public func startAuthenticator() async throws -> AuthenticatorSetup {
        let setup = try await authorized { [client] in try await client.send(API.TwoFactor.totpSetup, bearer: $0) }
        return AuthenticatorSetup(
            secret: setup.secret, otpauthURI: setup.otpauthUri, qrCodeSVG: setup.qrCodeSvg,
            expiresAt: setup.expiresAt)
    }

    /// Confirms the pending authenticator app with a code from it. When it is the account's
    /// first second factor, the backup codes come back, once: show them, and have the person
    /// confirm they saved them.
    public func confirmAuthenticator(code: String) async throws -> [String]? {
        try await authorized { [client] in
            try await client.send(API.TwoFactor.totpVerify, CodeRequest(code: code), bearer: $0)
        }.backupCodes
    }

    /// Removes the authenticator app from the account.
    public func removeAuthenticator() async throws {
        _ = try await authorized { [client] in try await client.send(API.TwoFactor.totpDelete, bearer: $0) }
    }

    /// New backup codes (the old ones stop working), shown once.
    public func regenerateBackupCodes() async throws -> [String] {
        try await authorized { [client] in
            try await client.send(API.TwoFactor.backupCodesRegenerate, bearer: $0)
        }.backupCodes
    }

    // MARK: SMS and email codes

    /// Sends a code to `phone` (or the number on file) to turn SMS codes on.
    public func startSMS(phone: String?) async throws -> CodeSentResponse {
        try await authorized { [client] in
            try await client.send(API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: phone), bearer: $0)
        }
    }

    /// Confirms SMS codes with the code `startSMS(phone:)` sent. When it is the account's first second factor,
    /// the backup codes come back, once.
    public func confirmSMS(code: String) async throws -> [String]? {
        try await authorized { [client] in
            try await client.send(API.TwoFactor.smsVerify, CodeRequest(code: code), bearer: $0)
        }.backupCodes
    }

    /// Sends a code to the account's email address to turn email codes on.
    public func startEmail() async throws -> CodeSentResponse {
        try await authorized { [client] in try await client.send(API.TwoFactor.emailSetup, bearer: $0) }
    }

    /// Confirms email codes with the code `startEmail()` sent. When it is the account's first second factor,
    /// the backup codes come back, once.
    public func confirmEmail(code: String) async throws -> [String]? {
        try await authorized { [client] in
            try await client.send(API.TwoFactor.emailVerify, CodeRequest(code: code), bearer: $0)
        }.backupCodes
    }

    // MARK: Passkeys

    /// The account's passkeys.
    public func passkeys() async throws -> [PasskeyDTO] {
        try await authorized { [client] in try await client.send(API.Passkeys.list, bearer: $0) }.credentials
    }

    /// Makes a passkey with the `PasskeyCreating` given and registers it under `name`.
    public func addPasskey(name: String?) async throws -> PasskeyRegisteredResponse {
        guard let passkeyMaker else { throw PasskeyCancelled() }
        return try await authorized { [client] token in
            let options = try await client.send(
                API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: token)
            let credential = try await passkeyMaker.registration(for: options)
            return try await client.send(
                API.Passkeys.registerVerify, PasskeyRegistrationRequest(credential: credential, name: name),
                bearer: token)
        }
    }

    /// Renames the passkey `id` to `name`; the passkey as the server now has it.
    public func renamePasskey(_ id: String, to name: String) async throws -> PasskeyDTO {
        try await authorized { [client] in
            try await client.send(API.Passkeys.rename, id, PasskeyRenameRequest(name: name), bearer: $0)
        }
    }

    /// Removes the passkey `id` from the account.
    public func removePasskey(_ id: String) async throws {
        _ = try await authorized { [client] in try await client.send(API.Passkeys.delete, id, bearer: $0) }
    }

    // MARK: Remembered devices

    /// The devices that skip the second step ("Remember this device"), each with where it was
    /// remembered (`name`), when it was last used and when it stops being remembered.
    public func rememberedDevices() async throws -> [TrustedDeviceDTO] {
        try await authorized { [client] in try await client.send(API.TwoFactor.trustedDevices, bearer: $0) }.devices
    }

    /// Forgets the remembered device `id`: its next sign-in asks the second step again.
    public func forgetRememberedDevice(_ id: UUID) async throws {
        _ = try await authorized { [client] in
            try await client.send(API.TwoFactor.revokeTrustedDevice, id.uuidString.lowercased(), bearer: $0)
        }
    }

    // MARK: Calls

    /// `call` with a current token, refreshed or stepped up when the server asks
    /// (`SessionManager.authorized`).
    private func authorized<T: Sendable>(_ call: @Sendable (String) async throws -> T) async throws -> T {
        try await session.authorized(stepUp: stepUp, call)
    }
}
