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
    /// password alone signs in). Backup codes count only beside a real factor.
    func available(for user: User) async throws -> [FactorMethod] {
        let account = try await credentials(for: user)
        var methods: [FactorMethod] = []
        if account.passkeys > 0 { methods.append(.webauthn) }
        if account.totp { methods.append(.totp) }
        if account.keyDevices > 0 { methods.append(.deviceKey) }
        if account.smsCodes { methods.append(.sms) }
        if account.emailCodes { methods.append(.email) }
        if let primary = user.primaryMethod, let index = methods.firstIndex(of: primary) {
            methods.insert(methods.remove(at: index), at: 0)
        }
        if !methods.isEmpty, account.backupCodes > 0 { methods.append(.backup) }
        return methods
    }

    /// Everything that can sign in to `user`'s account (issue T: one definition, which the
    /// login flow's offer above and `SignInPolicy` both read). SMS sign-in devices are not a
    /// login flow's second step, but they sign in, so they are here.
    func credentials(for user: User) async throws -> SignInCredentials {
        let stored = try await users.storedFactors(userID: user.id)
        return SignInCredentials(
            totp: stored.activeTOTP > 0, passkeys: stored.passkeys, keyDevices: stored.deviceKeys,
            smsDevices: stored.smsDevices, smsCodes: user.smsEnabled && user.verifiedPhone != nil,
            emailCodes: user.emailEnabled, backupCodes: stored.unusedBackupCodes,
            verifiedPhone: user.verifiedPhone != nil)
    }

    /// After a factor is removed: with no second factor left, backup codes would be a password
    /// alone and remembered devices would skip nothing, so both go (2FA reset).
    /// Reads the user afresh, as the removal left them.
    func purgeIfNoneLeft(userID: UUID, origin: RequestOrigin) async throws {
        guard let user = try await users.user(id: userID), try await available(for: user).isEmpty else { return }
        try await backupCodes.deleteAll(for: userID)
        try await trustedDevices.revokeAll(userID: userID, origin: origin)
    }

    /// The outcome of checking one second factor.
    enum Verification {
        /// Proven; the RFC 8176 method reference to record (`otp`, `sms`, `hwk`, …).
        case verified(amr: String, backupCodesRemaining: Int?)
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
            return .verified(amr: proof.amr, backupCodesRemaining: nil)
        }
        if method == .deviceKey {
            try await deviceKeys.checkSecondFactor(deviceKey, userID: userID, flowID: flowID, origin: origin)
            return .verified(amr: "hwk", backupCodesRemaining: nil)
        }
        let code = try InputValidation.code(code)
        switch method {
        case .totp:
            guard let credential = secret else { return .notEnabled }
            try await totp.check(code, credential: credential, origin: origin)
            return .verified(amr: "otp", backupCodesRemaining: nil)
        case .sms, .email:
            guard let channel = DeliveryChannel(method) else { return .notEnabled }
            // With a flow, the code sent for that login; without, one from POST /auth/step-up/send.
            _ = try await codes.verify(
                code, channel: channel, purpose: flowID == nil ? .stepUp : .login, userID: userID, flowID: flowID,
                origin: origin)
            return .verified(amr: channel == .sms ? "sms" : "otp", backupCodesRemaining: nil)
        case .backup:
            let remaining = try await backupCodes.use(code, userID: userID, origin: origin)
            return .verified(amr: "otp", backupCodesRemaining: remaining)
        default:
            return .notEnabled
        }
    }
}
