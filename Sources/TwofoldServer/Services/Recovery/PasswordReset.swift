import Crypto
import Foundation
import TwofoldAPI

/// A forgotten password (issue W item 2; NIST SP 800-63B rev 4 §4.2, OWASP's Forgot Password
/// cheat sheet). The rules, each here alone:
///
/// - a link goes only to an account's **verified** address, and the answer is the same for
///   every address typed (known or not, verified or not);
/// - the link works once, for `ProductRules.passwordResetLifetime`, and a newer link ends it;
/// - on an account with a second factor the link is not enough: one of those factors is proven
///   with the new password (email codes never: the link proves that mailbox already; backup codes
///   only beside another factor), and a wrong one counts against that factor like any other try;
///   without one, the way back is account recovery;
/// - the new password ends every session and remembered device, and every verified address and
///   phone hears of it.
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

    /// Sends a link to the account whose verified address `email` is; the same answer whatever
    /// the address.
    func forgot(_ body: PasswordForgotRequest, origin: RequestOrigin) async throws -> PasswordForgotResponse {
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

        let user = try await users.user(identifier: email).flatMap { $0.verifiedEmail == email ? $0 : nil }
        if let user, user.status == .active, configuration.delivers(.email) {
            let link = try await links.issue(
                .passwordReset, for: user, lifetime: rules.passwordResetLifetime, origin: origin)
            let needsFactor = try await !methods(for: user).isEmpty
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
        } else if let user, user.status != .active, configuration.delivers(.email) {
            // A locked account is told why a new password would not help, not sent a link.
            try await outbox.enqueue(
                .email, to: email, subject: "Your Twofold account is locked",
                body: "Hello \(user.username),\n\nSomeone asked to reset the password of your Twofold account, "
                    + "but the account is locked, and a new password would not unlock it. Ask your administrator, "
                    + "or recover the account at \(configuration.publicURL)/\(Pages.recovery.path)", now: now)
            try await audit.record(
                .passwordResetRequested, user: user.id, detail: "the account is locked: no link sent", origin: origin)
        } else {
            try await audit.record(
                .passwordResetRequested, user: nil, detail: "no account has this address verified", origin: origin)
        }
        return PasswordForgotResponse(
            linkLifetimeSeconds: Int(rules.passwordResetLifetime),
            message: "If an account has this address, and the address is confirmed, a link to choose a new "
                + "password is on its way. It works for \(rules.passwordResetLifetime.inWords).")
    }

    /// What the link `token` needs besides the new password.
    func options(token: String) async throws -> PasswordResetOptions {
        let (link, user) = try await live(token)
        let methods = try await methods(for: user)
        let devices = methods.contains(.deviceKey) ? try await keyDevices(of: user) : nil
        return PasswordResetOptions(
            secondFactorRequired: !methods.isEmpty, availableMethods: methods,
            maskedPhone: methods.contains(.sms) ? user.verifiedPhone.map(Masking.phone) : nil,
            deviceIds: devices, expiresAt: link.expiresAt)
    }

    /// An SMS code for the reset, to the verified phone, when SMS codes are one of its factors.
    func sendCode(token: String) async throws -> CodeSentResponse {
        let (link, user) = try await live(token)
        guard try await methods(for: user).contains(.sms), let phone = user.verifiedPhone else {
            throw InputValidation.failure(["method": "this account has no SMS codes to reset with"])
        }
        return try await codes.send(.sms, purpose: .passwordReset, to: phone, userID: user.id, flowID: link.id)
    }

    /// A challenge for a device key of the account, to sign for the reset.
    func deviceKeyChallenge(_ body: PasswordResetChallengeRequest) async throws -> DeviceChallengeResponse {
        let (_, user) = try await live(body.token)
        guard try await methods(for: user).contains(.deviceKey) else {
            throw InputValidation.failure(["deviceId": "this account has no device key to reset with"])
        }
        let device = try await deviceKeys.keyDevice(try DeviceInput.deviceID(body.deviceId), userID: user.id)
        return try await deviceKeys.issueChallenge(for: device, purpose: .stepUp, flowID: nil)
    }

    /// Options for a passkey assertion that proves the reset, naming the account's passkeys.
    func passkeyOptions(token: String) async throws -> PasskeyRequestOptions {
        let (_, user) = try await live(token)
        guard try await methods(for: user).contains(.webauthn) else {
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
        let methods = try await methods(for: user)
        var proven = "the emailed link alone"
        if !methods.isEmpty {
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
                _ = try InputValidation.code(code)
            }
            proven = method.rawValue
        }
        let hash = try await passwords.hash(body.newPassword)
        try await links.claimed(link) {
            if let method = body.method, !methods.isEmpty {
                try await prove(method, body, user: user, link: link, origin: origin)
            }
            guard
                try await users.setPasswordHash(
                    hash, userID: user.id, now: clock.now(), replacing: user.passwordHash, addedBy: nil)
            else {
                throw Problem(
                    status: 409, code: .conflict, title: "The password was changed meanwhile",
                    detail: "The password changed while this reset was made. Sign in with it, or ask for a new link.")
            }
        }
        try await sessions.revokeAll(userID: user.id, reason: "password reset")
        try await trustedDevices.revokeAll(userID: user.id, origin: origin)
        try await links.endAll(userID: user.id, purpose: .passwordReset)
        let remaining = try await factorChanges.withoutPassword(userID: user.id)
        try await factorChanges.notify(
            user, subject: "Your password was reset",
            body: "Twofold: the password of your account \(user.username) was reset with a link sent to this "
                + "address. Every session was signed out and every remembered device forgotten. \(remaining) If "
                + "this was not you, recover your account at \(configuration.publicURL)/\(Pages.recovery.path)")
        try await audit.record(.passwordReset, user: user.id, detail: "with \(proven)", origin: origin)
    }

    /// The second factors that may prove a reset of `user`'s password: none when the account has
    /// only email codes (and backup codes), which the link's mailbox proves already.
    func methods(for user: User) async throws -> [FactorMethod] {
        let methods = try await secondFactors.available(for: user).filter { $0 != .email }
        return methods.contains(where: { $0 != .backup }) ? methods : []
    }

    private func prove(
        _ method: FactorMethod, _ body: PasswordResetRequest, user: User, link: EmailLinkRecord, origin: RequestOrigin
    ) async throws {
        if method == .sms {
            _ = try await codes.verify(
                try InputValidation.code(body.code), channel: .sms, purpose: .passwordReset, userID: user.id,
                flowID: link.id, origin: origin)
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
            $0.method == .secureEnclave && $0.publicKey != nil
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
