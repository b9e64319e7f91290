import Foundation
import TwofoldAPI

/// Which second factors a user has, and checking one of them. Each factor's capability adds
/// itself here as it lands (passkeys, TOTP, device keys, SMS and email codes, backup codes).
struct SecondFactors: Sendable {
    let users: any UserStore
    let totp: TOTPService
    let codes: OneTimeCodeService
    let backupCodes: BackupCodeService
    let deviceKeys: DeviceKeyService
    let trustedDevices: TrustedDeviceService
    let passkeys: PasskeyService

    /// The methods a login flow offers this user, most preferred first (passkeys lead, seed 000,
    /// unless the user chose another primary); empty when the user has no second factor (then a
    /// password alone signs in). `SignInCredentials.loginMethods` decides.
    func available(for user: User) async throws -> [FactorMethod] {
        try await credentials(for: user).loginMethods(primary: user.primaryMethod)
    }

    /// Everything that can sign in to `user`'s account (issue V item 2: one definition, which the
    /// login flow's offer, `SignInPolicy`, the purge below and the recovery hold all read).
    func credentials(for user: User) async throws -> SignInCredentials {
        SignInCredentials(user: user, stored: try await users.storedFactors(userID: user.id))
    }

    /// After a factor is removed: with no second factor left, backup codes would be a password
    /// alone and remembered devices would skip nothing, so both go (2FA reset).
    /// Reads the user afresh, as the removal left them.
    func purgeIfNoneLeft(userID: UUID, origin: RequestOrigin) async throws {
        guard let user = try await users.user(id: userID), try await !credentials(for: user).hasSecondFactor else {
            return
        }
        try await backupCodes.deleteAll(for: userID)
        try await trustedDevices.revokeAll(userID: userID, origin: origin)
    }

    /// The outcome of checking one second factor.
    enum Verification {
        /// Proven: the RFC 8176 method reference to record (`otp`, `sms`, `hwk`, …) and the
        /// proof, bound to the credential that gave it.
        case verified(amr: String, proof: Proof, backupCodesRemaining: Int?)
        /// The user has no such factor enabled.
        case notEnabled
    }

    /// A device-key signature over a challenge from `POST /auth/mfa/device-key/challenge` (login
    /// flow) or `POST /auth/step-up/device-key/challenge` (step-up).
    struct DeviceKeyProof: Sendable {
        var deviceId: String?
        var challengeId: String?
        var signature: String?
    }

    /// Checks one second factor of `user` (step-up, and the second step of a login flow). A
    /// method the user has not enabled is `.notEnabled`; a wrong code throws the factor's
    /// problem (`invalid_code` with `attemptsRemaining`, `locked`, `account_locked`).
    func verify(
        method: FactorMethod, code: String?, deviceKey: DeviceKeyProof? = nil, passkey: AuthenticationCredential? = nil,
        for user: User, flowID: UUID? = nil, origin: RequestOrigin
    ) async throws -> Verification {
        let userID = user.id
        // TOTP is enabled exactly when an active secret exists, so the secret itself answers that
        // (one statement fewer on the most common second step).
        let secret = method == .totp ? try await totp.active(for: userID) : nil
        if method == .totp {
            guard secret != nil else { return .notEnabled }
        } else if flowID == nil, let channel = DeliveryChannel(method) {
            // A step-up code goes to the verified phone or the address on file, factor or not:
            // `SignInPolicy` weighs what it proves (the password with a fresh code is how an
            // owner removes what they did not add, and how a downgrade proves the phone).
            guard user.destination(for: channel) != nil else { return .notEnabled }
        } else {
            guard try await available(for: user).contains(method) else { return .notEnabled }
        }
        if method == .webauthn {
            // A login flow's passkey is `SecondStep.completeWithPasskey`'s (verified before
            // its unit of work); here, a step-up's.
            guard let passkey, flowID == nil else { throw InputValidation.failure(["credential": "is required"]) }
            let proof = try await passkeys.authenticate(
                passkey, purpose: .stepUp, userID: userID, flowID: nil, origin: origin)
            return .verified(amr: proof.amr, proof: .passkey(proof.passkey.credentialID), backupCodesRemaining: nil)
        }
        if method == .deviceKey {
            let device = try await deviceKeys.checkSecondFactor(
                deviceKey, userID: userID, flowID: flowID, origin: origin)
            return .verified(amr: "hwk", proof: device, backupCodesRemaining: nil)
        }
        let code = try InputValidation.code(code, for: method)
        switch method {
        case .totp:
            guard let credential = secret else { return .notEnabled }
            try await totp.check(code, credential: credential, origin: origin)
            return .verified(amr: "otp", proof: .totp(secretID: credential.id), backupCodesRemaining: nil)
        case .sms, .email:
            guard let channel = DeliveryChannel(method) else { return .notEnabled }
            // With a flow, the code sent for that login; without, one from POST /auth/step-up/send.
            // A step-up (no flow) runs outside a unit of work: parallel copies wait for each other.
            let destination = try await codes.verify(
                code, channel: channel, purpose: flowID == nil ? .stepUp : .login, userID: userID, flowID: flowID,
                waiting: flowID == nil, origin: origin)
            return .verified(
                amr: channel == .sms ? "sms" : "otp", proof: .code(channel, to: destination), backupCodesRemaining: nil)
        case .backup:
            let remaining = try await backupCodes.use(code, userID: userID, waiting: flowID == nil, origin: origin)
            return .verified(amr: "otp", proof: .backup, backupCodesRemaining: remaining)
        default:
            return .notEnabled
        }
    }
}
