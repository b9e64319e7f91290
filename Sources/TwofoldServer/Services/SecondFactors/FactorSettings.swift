import Foundation
import TwofoldAPI
import TwofoldCore

/// Managing second factors (seed 000, API.md "Second-factor management"), as a use case:
/// authenticator apps, backup codes, SMS and email codes, the primary method, remembered
/// devices, and the status of them all. Every change asks `SignInPolicy`.
struct FactorSettings: Sendable {
    let configuration: Configuration
    let clock: ServerClock
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let totp: TOTPService
    let backupCodes: BackupCodeService
    let codes: OneTimeCodeService
    let users: any UserStore
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy
    let passkeys: PasskeyService

    /// Starts adding an authenticator app: a new secret, pending until a code confirms it.
    func setupTOTP(user: User, caller: AuthenticatedUser) async throws -> TOTPSetupResponse {
        try await policy.require(.add(kind: .totp), caller: caller, user: user)
        return try await totp.setup(userID: user.id, account: user.email)
    }

    /// The authenticator app being added, as its setup showed it (the same secret), while it
    /// waits for its first code.
    func pendingTOTP(user: User) async throws -> TOTPSetupResponse? {
        try await totp.pendingSetup(userID: user.id, account: user.email)
    }

    /// A code from the app confirms it; the first second factor also hands out backup codes.
    func confirmTOTP(_ code: String, user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws
        -> FactorEnabledResponse
    {
        let userID = user.id
        try await policy.require(.add(kind: .totp), caller: caller, user: user)
        let now = clock.now()
        // The first second factor also hands out the backup codes. Both are recorded on this
        // session before the secret becomes active, so a parallel step-up with the new app
        // finds them recorded.
        let hadBackupCodes = try await backupCodes.exist(for: userID)
        try await factorChanges.recordAdding(
            FactorChanges.factorName(method: .totp), withNewBackupCodes: !hadBackupCodes, caller: caller)
        try await totp.confirm(code, userID: userID, origin: origin, addedBy: caller.adding)
        try await audit.record(.factorAdded, user: userID, detail: FactorMethod.totp.rawValue, origin: origin)
        let codes: [String]? =
            hadBackupCodes
            ? nil : try await backupCodes.regenerate(for: userID, addedBy: caller.adding)
        try await factorChanges.notifyAdded("An authenticator app", user: user)
        return FactorEnabledResponse(backupCodes: codes, serverTime: now)
    }

    func removeTOTP(user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws {
        try await policy.require(
            .remove(proof: FactorChanges.factorName(method: .totp)), caller: caller, user: user)
        let userID = user.id
        guard try await totp.remove(userID: userID) else {
            throw Problem(status: 404, code: .notFound, title: "No authenticator app is enabled")
        }
        try await audit.record(.factorRemoved, user: userID, detail: FactorMethod.totp.rawValue, origin: origin)
        try await factorChanges.removed(
            "The authenticator app", factors: [FactorMethod.totp.rawValue], userID: userID, keeping: caller.sessionID,
            origin: origin)
    }

    func regenerateBackupCodes(user: User, caller: AuthenticatedUser, origin: RequestOrigin) async throws
        -> BackupCodesResponse
    {
        try await policy.require(.add(kind: .backup), caller: caller, user: user)
        let userID = user.id
        guard try await !secondFactors.available(for: user).isEmpty else {
            throw Problem(
                status: 409, code: .conflict, title: "No second factor",
                detail: "Enable an authenticator app first; backup codes stand in for it.")
        }
        // The new codes are this session's to show, never its proof.
        try await factorChanges.recordAdding([FactorChanges.factorName(method: .backup)], caller: caller)
        let codes = try await backupCodes.regenerate(for: userID, addedBy: caller.adding)
        try await audit.record(.factorAdded, user: userID, detail: "backup codes regenerated", origin: origin)
        // The old codes are gone: a session one of them signed in ends.
        try await factorChanges.endSessionsThatProved(
            [], replaced: [FactorMethod.backup.rawValue], userID: userID, keeping: caller.sessionID, origin: origin)
        return BackupCodesResponse(backupCodes: codes)
    }

    func status(of user: User) async throws -> TwoFactorStatus {
        let userID = user.id
        let totp = try await totp.active(for: userID)
        let backupCodes = try await backupCodes.summary(for: userID)
        return TwoFactorStatus(
            methods: try await secondFactors.available(for: user),
            totpConfiguredAt: totp?.confirmedAt, passkeys: try await passkeys.list(userID: userID),
            sms: .init(enabled: user.smsEnabled, maskedDestination: user.phone.map(Masking.phone)),
            email: .init(enabled: user.emailEnabled, maskedDestination: Masking.email(user.email)),
            backupCodesRemaining: backupCodes.unused, backupCodesGeneratedAt: backupCodes.generatedAt,
            backupCodesLow: backupCodes.generatedAt.map { _ in
                backupCodes.unused <= configuration.rules.backupCodesWarnAt
            },
            trustedDeviceCount: try await trustedDevices.list(userID: userID).count,
            serverTime: clock.now())
    }

    func flatStatus(of user: User) async throws -> MFAStatus {
        let methods = try await secondFactors.available(for: user)
        return MFAStatus(
            enabled: !methods.isEmpty, methods: methods,
            backupCodesRemaining: try await backupCodes.remaining(for: user.id),
            trustedDeviceCount: try await trustedDevices.list(userID: user.id).count,
            serverTime: clock.now())
    }

    // MARK: SMS and email codes

    /// A code to `phoneNumber` (the number on file when `nil`) to turn SMS codes on.
    func setupSMS(phoneNumber: String?, user: User, caller: AuthenticatedUser) async throws -> CodeSentResponse {
        var destination = user.phone
        if let number = phoneNumber {
            guard let valid = InputValidation.phone(number) else {
                throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
            }
            destination = valid
        }
        // A number other than the verified one is a change of where codes go, as
        // `PUT /account/phone` is: the policy names it so.
        try await policy.require(
            destination != nil && destination != user.verifiedPhone ? .changeDestination(.sms) : .add(kind: .sms),
            caller: caller, user: user)
        guard let destination else {
            throw InputValidation.failure(["phoneNumber": "is required: this account has no phone number on file"])
        }
        return try await sendEnableCode(.sms, to: destination, user: user)
    }

    /// A code to the address on file to turn email codes on.
    func setupEmail(user: User, caller: AuthenticatedUser) async throws -> CodeSentResponse {
        try await policy.require(.add(kind: .email), caller: caller, user: user)
        return try await sendEnableCode(.email, to: user.email, user: user)
    }

    /// The account's first method offered at sign-in.
    func setPrimaryMethod(_ method: FactorMethod, user: User, caller: AuthenticatedUser) async throws {
        try await policy.require(.configure, caller: caller, user: user)
        let enabled = try await secondFactors.available(for: user).filter { $0 != .backup }
        guard enabled.contains(method) else {
            throw InputValidation.failure([
                "method": "must be one of this account's factors: \(enabled.map(\.rawValue))"
            ])
        }
        try await users.setPrimaryMethod(method, userID: user.id, now: clock.now())
    }

    private func sendEnableCode(_ channel: DeliveryChannel, to destination: String, user: User) async throws
        -> CodeSentResponse
    {
        guard configuration.delivers(channel) else {
            throw Problem(
                status: 409, code: .conflict, title: "\(channel.rawValue) codes are switched off on this server")
        }
        return try await codes.send(channel, purpose: .enable, to: destination, userID: user.id, flowID: nil)
    }

    /// The code sent to the destination turns SMS or email codes on; the first second factor
    /// also hands out backup codes.
    func confirmCodes(
        _ channel: DeliveryChannel, code: String, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> FactorEnabledResponse {
        let userID = user.id
        try await policy.require(.add(kind: channel.method), caller: caller, user: user)
        let destination = try await codes.verify(
            code, channel: channel, purpose: .enable, userID: userID, flowID: nil, origin: origin)
        if channel == .sms, destination != user.verifiedPhone {
            try await policy.require(.changeDestination(.sms), caller: caller, user: user)
        }
        let now = clock.now()
        let hadBackupCodes = try await backupCodes.exist(for: userID)
        try await factorChanges.recordAdding(
            FactorChanges.factorName(method: channel.method), withNewBackupCodes: !hadBackupCodes,
            caller: caller)
        // Told at the destinations on file before the change, so a number that replaces the
        // owner's is not the only one to hear of it.
        try await factorChanges.notifyAdded(
            channel == .sms
                ? "SMS codes to \(Masking.phone(destination))" : "Email codes to \(Masking.email(destination))",
            user: user)
        try await users.enableCodes(
            channel, phone: channel == .sms ? destination : nil, userID: userID, now: now,
            addedBy: caller.adding)
        try await audit.record(.factorAdded, user: userID, detail: channel.rawValue, origin: origin)
        if channel == .sms, destination != user.verifiedPhone {
            // A new number, as `PUT /account/phone` makes one: codes to the old one prove nothing now.
            try await factorChanges.endSessionsThatProved(
                [FactorMethod.sms.rawValue], userID: userID, keeping: caller.sessionID, origin: origin)
        }
        let codes: [String]? =
            hadBackupCodes
            ? nil : try await backupCodes.regenerate(for: userID, addedBy: caller.adding)
        return FactorEnabledResponse(backupCodes: codes, serverTime: now)
    }

    func disableCodes(_ channel: DeliveryChannel, user: User, caller: AuthenticatedUser, origin: RequestOrigin)
        async throws
    {
        try await policy.require(.remove(proof: channel.rawValue), caller: caller, user: user)
        let userID = user.id
        // One conditional update: of two removals at once, one finds the codes on.
        guard try await users.disableCodes(channel, userID: userID, now: clock.now())
        else {
            throw Problem(status: 404, code: .notFound, title: "\(channel.rawValue) codes are not enabled")
        }
        try await audit.record(.factorRemoved, user: userID, detail: channel.rawValue, origin: origin)
        try await factorChanges.removed(
            channel == .sms ? "Sign-in codes by SMS" : "Sign-in codes by email", factors: [channel.method.rawValue],
            userID: userID, keeping: caller.sessionID, origin: origin)
    }

    func rememberedDevices(userID: UUID) async throws -> TrustedDevicesResponse {
        TrustedDevicesResponse(devices: try await trustedDevices.list(userID: userID))
    }

    /// Forgets one remembered device (`id`, `nil` when the path named none).
    func forgetRememberedDevice(_ id: UUID?, user: User, caller: AuthenticatedUser, origin: RequestOrigin)
        async throws
    {
        try await policy.require(.signOut, caller: caller, user: user)
        guard let id else { throw Problem(status: 404, code: .notFound, title: "No such remembered device") }
        try await trustedDevices.revoke(id: id, userID: user.id, origin: origin)
    }
}
