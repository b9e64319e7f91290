import Foundation
import TwofoldAPI

/// Changes to the signed-in person's own account, as a use case: the password (which signs out
/// everything else, and may remove what signs in without it), and the phone number or email
/// address codes go to (confirmed by a code sent there). Each asks `SignInPolicy`.
struct AccountChanges: Sendable {
    let configuration: Configuration
    let clock: ServerClock
    let passwords: PasswordHasher
    let passwordReentry: PasswordReentry
    let audit: Auditor
    let trustedDevices: TrustedDeviceService
    let sessions: SessionService
    let codes: OneTimeCodeService
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy
    let passkeys: PasskeyService

    /// The current password proves ownership; the new one must meet the password policy. Every
    /// other session and every remembered device is revoked, so a thief who had either is out.
    func changePassword(
        _ body: PasswordChangeRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws {
        try await policy.require(.changePassword, caller: caller, user: user)
        guard (1...256).contains(body.currentPassword.unicodeScalars.count) else {
            throw InputValidation.failure(["currentPassword": "must be 1 to 256 characters"])
        }
        if let problem = InputValidation.passwordProblem(body.newPassword, username: user.username, email: user.email) {
            throw InputValidation.failure(["newPassword": problem])
        }
        guard try await passwordReentry.matches(body.currentPassword, of: user) else {
            throw Problem(
                status: 401, code: .invalidCredentials, title: "Wrong password",
                detail: "The current password is wrong.", errors: ["currentPassword": "is wrong"])
        }
        let now = clock.now()
        let hash = try await passwords.hash(body.newPassword)
        // Device keys, SMS sign-in devices and passkeys sign in without the password, so a new
        // password alone does not shut out whoever added one: `removeDeviceKeys` removes every
        // enrolled device and `removePasskeys` every passkey, and the notice names what remains.
        let removes = body.removeDeviceKeys == true || body.removePasskeys == true
        let change = {
            // Only over the hash the current password was checked against: a change that raced
            // this one (the owner's, say, while a stolen session changes it too) is not undone.
            guard
                try await users.setPasswordHash(
                    hash, userID: caller.userID, now: now, replacing: user.passwordHash, addedBy: caller.adding)
            else {
                throw Problem(
                    status: 409, code: .conflict, title: "The password was changed meanwhile",
                    detail:
                        "Your password was changed while this change was being made. Sign in again with the new one.")
            }
            try await sessions.revokeAll(userID: caller.userID, except: caller.sessionID, reason: "password changed")
            try await trustedDevices.revokeAll(userID: caller.userID, origin: origin)
            if body.removeDeviceKeys == true {
                for device in try await deviceKeys.removeAll(userID: caller.userID) {
                    try await audit.record(
                        .factorRemoved, user: caller.userID,
                        detail: "device \(device.deviceID) removed with the password", origin: origin)
                }
            }
            if body.removePasskeys == true {
                _ = try await passkeys.removeAll(userID: caller.userID, origin: origin)
            }
        }
        if removes {
            // As one reset (`SessionEpoch`), the password included: no sign-in with a key or
            // passkey starts until they are gone, this session alone goes on, and a reset that
            // cannot start (another runs) changes nothing.
            try await sessions.reset(userID: caller.userID, keeping: caller.sessionID) { try await change() }
            try await secondFactors.purgeIfNoneLeft(userID: user.id, origin: origin)
        } else {
            try await change()
        }
        let remaining = try await factorChanges.withoutPassword(userID: caller.userID)
        try await factorChanges.notify(
            user, subject: "Your password was changed",
            body: "Twofold: your password was changed, your other sessions were signed out and your remembered "
                + "devices forgotten. \(remaining)")
        try await audit.record(.passwordChanged, user: caller.userID, origin: origin)
    }

    /// Step 1 (no `code`): a code to the new destination, after the policy's step-up. Step 2
    /// (`code`): the destination the code went to becomes the one on file.
    func changeDestination(
        _ channel: DeliveryChannel, to destination: String, code: String?, user: User, caller: AuthenticatedUser,
        origin: RequestOrigin
    ) async throws -> DestinationChangeOutcome {
        var user = user
        let userID = user.id
        let field = channel == .sms ? "phoneNumber" : "email"
        // Asked at both steps: a session that could send the code may since have gone stale.
        try await policy.require(.changeDestination(channel), caller: caller, user: user)
        guard let code else {
            guard configuration.delivers(channel) else {
                throw Problem(
                    status: 409, code: .conflict, title: "\(channel.rawValue) codes are switched off on this server",
                    detail: "A new \(field) cannot be confirmed without sending it a code.")
            }
            // An address another account uses is answered like a free one, so this call does not
            // tell who has an account (issue T); that address's owner is told instead of sent a
            // code, and the change cannot be confirmed.
            var taken = false
            if channel == .email, destination != user.email {
                taken = try await users.emailInUse(destination, except: userID)
            }
            return .codeSent(
                try await codes.send(
                    channel, purpose: .changeDestination, to: destination, userID: userID, flowID: nil,
                    message: taken
                        ? .notice(
                            subject: "Someone tried to use your address",
                            body: "Twofold: someone signed in to another account asked to make this address "
                                + "theirs. Nothing changed, and nothing needs doing; your account is as it was.")
                        : .code))
        }
        let confirmed = try await codes.verify(
            code, channel: channel, purpose: .changeDestination, userID: userID, flowID: nil, origin: origin)
        guard confirmed == destination else {
            throw Problem(
                status: 409, code: .conflict, title: "The code was sent elsewhere",
                detail: "That code confirms a different \(field); ask for a new code for this one.",
                errors: [field: "does not match the one the code was sent to"])
        }
        // The new destination receives step-up codes from now on (and sign-in codes, where the
        // channel carries them): codes to it never vouch for this session, which chose it
        // (issue T review: a session moved the phone to its own number, then stepped up with
        // codes sent there). The old destinations hear of the change first.
        try await factorChanges.recordAdding([channel.rawValue], caller: caller)
        try await factorChanges.notify(
            user, subject: "Your \(channel == .sms ? "phone number" : "email address") was changed",
            body: "Twofold: the \(channel == .sms ? "phone number" : "email address") of your account is now "
                + "\(Masking.destination(destination, channel: channel)). If this was not you, sign in and change "
                + "your password.")
        let now = clock.now()
        if channel == .sms {
            try await users.setVerifiedPhone(
                destination, userID: userID, now: now, addedBy: caller.adding)
            user.phone = destination
            user.phoneVerifiedAt = now
        } else {
            guard
                try await users.setEmail(
                    destination, userID: userID, now: now, addedBy: caller.adding)
            else {
                throw Self.emailTaken
            }
            user.email = destination
        }
        user.updatedAt = now
        try await audit.record(
            channel == .sms ? .phoneChanged : .emailChanged, user: userID,
            detail: Masking.destination(destination, channel: channel), origin: origin)
        // Codes to the old destination proved it, not the new one: the sessions they started end.
        try await factorChanges.endSessionsThatProved(
            [channel.method.rawValue], userID: userID, keeping: caller.sessionID, origin: origin)
        return .changed(user.dto)
    }

    static let emailTaken = Problem(
        status: 409, code: .conflict, title: "Address in use",
        detail: "Another account uses that email address.", errors: ["email": "is in use"])
}
