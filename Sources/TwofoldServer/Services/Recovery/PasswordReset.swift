import Crypto
import Foundation
import Logging
import TwofoldAPI

/// A forgotten password (issue W item 2; NIST SP 800-63B rev 4 §4.2, OWASP's Forgot Password
/// cheat sheet). The rules, each here alone:
///
/// - a link goes only to an account's **confirmed** address, and the answer is the same, in the
///   same time, for every address typed: the lookup and the send run after the answer;
/// - the link works once, for `ProductRules.passwordResetLifetime`, and a newer link ends it;
/// - on an account with a second factor the link is not enough: one of those factors is proven
///   with the new password. Email codes never count (the link proves that mailbox already); an
///   account whose only factor is email codes, and has no backup code, is sent to account
///   recovery. Tries (and SMS codes sent) are a budget of the account's own, small enough that
///   the mailbox alone cannot lock the account;
/// - the new password ends every session and remembered device first, and every confirmed
///   address and phone hears of it.
struct PasswordReset: Sendable {
    let clock: ServerClock
    let links: EmailLinks
    let users: any UserStore
    let passwords: PasswordHasher
    let audit: Auditor
    let rateLimiter: RateLimiter
    let outbox: Outbox
    let secrets: SecretBox
    let sessions: SessionService
    let trustedDevices: TrustedDeviceService
    let secondFactors: SecondFactors
    let codes: OneTimeCodeService
    let deviceKeys: DeviceKeyService
    let passkeys: PasskeyService
    let factorChanges: FactorChanges
    let rules: ProductRules
    let configuration: Configuration
    let background: BackgroundWork

    /// Sends a link to the account whose verified address `email` is; the same answer whatever
    /// the address.
    func forgot(
        _ body: PasswordForgotRequest, origin: RequestOrigin, logger: Logger
    ) async throws -> PasswordForgotResponse {
        guard let email = InputValidation.email(body.email) else {
            throw InputValidation.failure(["email": "must be an email address, like name@example.com"])
        }
        let now = clock.now()
        try await rateLimiter.require(
            RateLimiter.addressKey("password-reset", address: origin.address),
            rule: .init(rules.passwordResetPerAddress), now: now)
        let keyed = HMAC<SHA256>.authenticationCode(
            for: Data(email.utf8), using: secrets.lookupKey(purpose: "password reset addresses")
        ).hexString
        try await rateLimiter.require(
            "password-reset-email:\(keyed)", rule: .init(rules.passwordResetPerAccount), now: now)

        // The lookup and the message after the answer: a stranger cannot time which addresses
        // have accounts (`BackgroundWork`).
        await background.start("password reset link", logger: logger) { [self] in
            try await sendLink(to: email, at: now, origin: origin)
        }
        return PasswordForgotResponse(
            linkLifetimeSeconds: Int(rules.passwordResetLifetime),
            message: "If an account has this address, and the address is confirmed, a link to choose a new "
                + "password is on its way. It works for \(rules.passwordResetLifetime.inWords).")
    }

    /// The link to `email`'s account, when it is active and the address confirmed; a locked
    /// account is told why a new password would not help; anything else is sent nothing.
    private func sendLink(to email: String, at now: Date, origin: RequestOrigin) async throws {
        let user = try await users.user(identifier: email).flatMap { $0.verifiedEmail == email ? $0 : nil }
        guard let user, configuration.delivers(.email) else {
            try await audit.record(
                .passwordResetRequested, user: nil, detail: "no account has this address confirmed", origin: origin)
            return
        }
        switch user.status {
        case .active:
            let link = try await links.issue(
                .passwordReset, for: user, lifetime: rules.passwordResetLifetime, origin: origin)
            let needsFactor = try await requirement(for: user).required
            try await outbox.enqueue(
                .email, to: email, subject: "Reset your Twofold password",
                body: "Hello \(user.username),\n\nSomeone asked to reset the password of your Twofold account. To "
                    + "choose a new one, open this link within \(rules.passwordResetLifetime.inWords):\n\n"
                    + "\(links.url(Pages.passwordReset, token: link.token))\n\n"
                    + (needsFactor
                        ? "You will also need one of your other sign-in methods: your authenticator app, a passkey, "
                            + "a backup code or a code by SMS.\n\n" : "")
                    + "The new password signs you out everywhere. If you did not ask for this, ignore this message: "
                    + "your password stays as it is.", now: now)
            try await audit.record(.passwordResetRequested, user: user.id, origin: origin)
        case .locked:
            try await outbox.enqueue(
                .email, to: email, subject: "Your Twofold account is locked",
                body: "Hello \(user.username),\n\nSomeone asked to reset the password of your Twofold account, "
                    + "but the account is locked, and a new password would not unlock it. Ask your administrator, "
                    + "or recover the account at \(configuration.publicURL)/\(Pages.recovery.path)", now: now)
            try await audit.record(
                .passwordResetRequested, user: user.id, detail: "the account is locked: no link sent", origin: origin)
        case .disabled:
            try await audit.record(
                .passwordResetRequested, user: user.id, detail: "the account is disabled: nothing sent", origin: origin)
        }
    }

    /// What the link `token` needs besides the new password.
    func options(token: String) async throws -> PasswordResetOptions {
        let (link, user) = try await live(token)
        let (required, methods) = try await requirement(for: user)
        let devices = methods.contains(.deviceKey) ? try await keyDevices(of: user) : nil
        return PasswordResetOptions(
            secondFactorRequired: required, availableMethods: methods,
            maskedPhone: methods.contains(.sms) ? user.verifiedPhone.map(Masking.phone) : nil,
            deviceIds: devices, expiresAt: link.expiresAt)
    }

    /// An SMS code for the reset, to the verified phone, when SMS codes are one of its factors.
    func sendCode(token: String) async throws -> CodeSentResponse {
        let (link, user) = try await live(token)
        guard try await requirement(for: user).methods.contains(.sms), let phone = user.verifiedPhone else {
            throw InputValidation.failure(["method": "this account has no SMS codes to reset with"])
        }
        // From the reset's own budget, not only the account's hourly sends.
        try await spendTry(user)
        return try await codes.send(.sms, purpose: .passwordReset, to: phone, userID: user.id, flowID: link.id)
    }

    /// A challenge for a device key of the account, to sign for the reset.
    func deviceKeyChallenge(_ body: PasswordResetChallengeRequest) async throws -> DeviceChallengeResponse {
        let (_, user) = try await live(body.token)
        guard try await requirement(for: user).methods.contains(.deviceKey) else {
            throw InputValidation.failure(["deviceId": "this account has no device key to reset with"])
        }
        let device = try await deviceKeys.keyDevice(try DeviceInput.deviceID(body.deviceId), userID: user.id)
        return try await deviceKeys.issueChallenge(for: device, purpose: .stepUp, flowID: nil)
    }

    /// Options for a passkey assertion that proves the reset, naming the account's passkeys.
    func passkeyOptions(token: String) async throws -> PasskeyRequestOptions {
        let (_, user) = try await live(token)
        guard try await requirement(for: user).methods.contains(.webauthn) else {
            throw InputValidation.failure(["method": "this account has no passkey to reset with"])
        }
        return try await passkeys.requestOptions(.stepUp, userID: user.id, flowID: nil)
    }

    /// Sets the new password: the link claimed once, the factor checked (a wrong one gives the
    /// link back), every session and remembered device ended, the owner told.
    func reset(_ body: PasswordResetRequest, origin: RequestOrigin) async throws {
        let (link, user) = try await live(body.token)
        if let problem = InputValidation.passwordProblem(body.newPassword, username: user.username, email: user.email) {
            throw InputValidation.failure(["newPassword": problem])
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let (required, methods) = try await requirement(for: user)
        if required, methods.isEmpty { throw Self.recoverInstead }
        var proven = "the emailed link alone"
        if required {
            guard let method = body.method, methods.contains(method) else {
                throw InputValidation.failure([
                    "method": "this account needs one of its sign-in methods too: "
                        + methods.map(\.rawValue).joined(separator: ", ")
                ])
            }
            // Checked before the link is claimed, so a malformed code costs nothing.
            if method != .webauthn, method != .deviceKey {
                guard let code = body.code, !code.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw Problem(
                        status: 422, code: .validationFailed, title: "Enter the code",
                        detail: "Type the code as well as the new password.", errors: ["code": "Enter the code."])
                }
                _ = try InputValidation.code(code, for: method)
            }
            proven = method.rawValue
        }
        if required { try await spendTry(user) }
        let hash = try await passwords.hash(body.newPassword)
        try await links.claimed(link) {
            if let method = body.method, required {
                try await prove(method, body, user: user, link: link, origin: origin)
            }
            // Everything the old password let in ends first: should the server stop before
            // the new password is written, the account is shut, not left open (fail closed).
            try await sessions.revokeAll(userID: user.id, reason: "password reset")
            try await trustedDevices.revokeAll(userID: user.id, origin: origin)
            guard
                try await users.setPasswordHash(
                    hash, userID: user.id, now: clock.now(), replacing: user.passwordHash, addedBy: nil)
            else {
                throw Problem(
                    status: 409, code: .conflict, title: "The password was changed meanwhile",
                    detail: "The password changed while this reset was made. Sign in with it, or ask for a new link.")
            }
        }
        try await links.endAll(userID: user.id, purpose: .passwordReset)
        let remaining = try await factorChanges.withoutPassword(userID: user.id)
        try await factorChanges.notify(
            user, subject: "Your password was reset",
            body: "Twofold: the password of your account \(user.username) was reset with a link sent to this "
                + "address. Every session was signed out and every remembered device forgotten. \(remaining) If "
                + "this was not you, recover your account at \(configuration.publicURL)/\(Pages.recovery.path)")
        try await audit.record(.passwordReset, user: user.id, detail: "with \(proven)", origin: origin)
    }

    /// Whether a reset of `user`'s password needs a second factor, and which may prove it: every
    /// second factor but email codes (the link's own mailbox). An account whose only factor is
    /// email codes needs a backup code, or account recovery when it has none: the mailbox alone
    /// must not replace both the password and the second factor.
    func requirement(for user: User) async throws -> (required: Bool, methods: [FactorMethod]) {
        let all = try await secondFactors.available(for: user)
        return (!all.isEmpty, all.filter { $0 != .email })
    }

    /// One try (or one SMS code) from the account's reset budget: a few, then one every few
    /// hours, so that the mailbox alone cannot spend the day's wrong codes that lock the account.
    private func spendTry(_ user: User) async throws {
        try await rateLimiter.require(
            "password-reset-tries:\(user.id.uuidString)", rule: .init(rules.passwordResetTries), now: clock.now())
    }

    static let recoverInstead = Problem(
        status: 403, code: .forbidden, title: "Recover your account instead",
        detail: "Your account's other sign-in method is email codes, which come to the same mailbox as this link, "
            + "so the link cannot stand for both. Recover your account: an administrator checks that it is you.")

    private func prove(
        _ method: FactorMethod, _ body: PasswordResetRequest, user: User, link: EmailLinkRecord, origin: RequestOrigin
    ) async throws {
        if method == .sms {
            let destination = try await codes.verify(
                try InputValidation.code(body.code, for: .sms), channel: .sms, purpose: .passwordReset, userID: user.id,
                flowID: link.id, origin: origin)
            // A code to a number that is no longer the verified one proves nothing now.
            guard destination == user.verifiedPhone else {
                throw InputValidation.failure(["code": "was sent to a number that is no longer on file"])
            }
            return
        }
        let deviceKey = SecondFactors.DeviceKeyProof(
            deviceId: body.deviceId, challengeId: body.challengeId, signature: body.signature)
        switch try await secondFactors.verify(
            method: method, code: body.code, deviceKey: deviceKey, passkey: body.credential, for: user, origin: origin)
        {
        case .verified: return
        case .notEnabled: throw InputValidation.failure(["method": "is not one of this account's sign-in methods"])
        }
    }

    private func keyDevices(of user: User) async throws -> [String] {
        try await deviceKeys.store.devices(userID: user.id).filter {
            $0.holdsKey
        }
        .map(\.deviceID)
    }

    /// The live reset link `token` names, and its account as it is now.
    private func live(_ token: String) async throws -> (EmailLinkRecord, User) {
        let link = try await links.live(token, purpose: .passwordReset)
        guard let user = try await users.user(id: link.userID), user.email == link.email else {
            throw EmailLinks.unknown
        }
        return (link, user)
    }
}
