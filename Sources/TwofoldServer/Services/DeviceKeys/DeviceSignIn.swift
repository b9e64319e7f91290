import Foundation
import Logging
import TwofoldAPI
import TwofoldCore

/// Seed 004's sign-in with a device, as a use case: a challenge for the device key and its
/// signature checked (also as a login flow's second step and as step-up), and the SMS fallback.
/// Anyone may call these with a username, so they answer alike whoever is enrolled, and what
/// strangers get wrong locks only their own tries (issue T).
struct DeviceSignIn: Sendable {
    let clock: ServerClock
    let audit: Auditor
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let loginFlows: LoginFlowService
    let codes: OneTimeCodeService
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let rules: ProductRules
    /// Where `requestOTP` looks the account up and sends its code, off the request path.
    let background: BackgroundWork

    /// A challenge for the device key. Unknown users and devices get an answer of the same shape
    /// (an SMS device's, with a challenge that nothing will accept), so this call does not tell
    /// who is enrolled.
    func initiate(_ body: DeviceRequest, address: String?) async throws -> DeviceChallengeResponse {
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        try await throttle("device-sign-in", address: address)
        var method = DeviceRecord.Method.smsOTP
        // The device is looked up for an unknown name too (as nobody's), so a name's answer
        // takes the same statements whether or not it has an account (issue V item 6).
        let user = try await users.named(body.username)
        if let device = try await deviceKeys.store.device(deviceID, userID: user?.id ?? Self.nobody) {
            method = device.method
            if device.holdsKey {
                return try await deviceKeys.issueChallenge(for: device, purpose: .signIn, flowID: nil)
            }
        }
        return deviceKeys.unanswerableChallenge(method: method)
    }

    /// A challenge for the device key as the second step of a password login (`otpFlowId` or
    /// `tempToken` from `POST /auth/login`); it works only for that flow.
    func loginFlowChallenge(_ body: DeviceKeyChallengeRequest) async throws -> DeviceChallengeResponse {
        let flow = try await loginFlows.active(
            try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken))
        let device = try await deviceKeys.keyDevice(body.deviceId, userID: flow.userID)
        return try await deviceKeys.issueChallenge(for: device, purpose: .loginFlow, flowID: flow.id)
    }

    /// A challenge for the device key as step-up (`POST /auth/step-up` with `method: deviceKey`).
    func stepUpChallenge(_ body: StepUpDeviceKeyChallengeRequest, user: User) async throws -> DeviceChallengeResponse {
        let device = try await deviceKeys.keyDevice(body.deviceId, userID: user.id)
        return try await deviceKeys.issueChallenge(for: device, purpose: .stepUp, flowID: nil)
    }

    /// Anyone can call this with a username, so an unknown user, a device without that
    /// challenge and a wrong signature all get the same answer (no `attemptsRemaining`), and
    /// wrong signatures lock only this sign-in, never the account (issue S item 3).
    func verifySignature(
        _ body: VerifySignatureRequest, address: String?, origin: RequestOrigin
    ) async throws -> DeviceTokenResponse {
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        let challengeID = try DeviceInput.challengeID(body.challengeId)
        let signature = try DeviceInput.signature(body.signature)
        try await throttle("device-verify", address: address)
        // An unknown name, or a device it does not have, reads what a real device's missing
        // challenge reads before the same refusal (issue V item 6).
        let user = try await users.named(body.username)
        guard let user, let device = try await deviceKeys.store.device(deviceID, userID: user.id) else {
            if user == nil { _ = try await deviceKeys.store.device(deviceID, userID: Self.nobody) }
            _ = try await deviceKeys.store.challenge(id: challengeID)
            throw DeviceKeyService.signatureRefused
        }
        try await anonymous(refusedAs: DeviceKeyService.signatureRefused) {
            try await deviceKeys.check(
                signature, challengeID: challengeID, purpose: .signIn, flowID: nil, device: device,
                origin: origin)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await sessions.start(
            user: user, methods: ["hwk", "mfa"], proofs: [try DeviceKeyService.proof(of: device)], origin: origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "device key \(deviceID)", origin: origin)
        return DeviceTokenResponse(
            token: tokens.accessToken.token, message: "Authentication successful",
            refreshToken: tokens.refreshToken.token, expiresAt: tokens.accessToken.expiresAt)
    }

    /// SMS fallback: a code to the phone on file of a user with an enrolled device. The answer is
    /// the same whether or not the user exists, has a device, or is inside the resend cooldown;
    /// the number shown is the one asked about, masked, never the one on file. The account is
    /// looked up and its code sent after the answer (`BackgroundWork`), so the answer's time is
    /// the same for every name too (issue V item 6).
    func requestOTP(_ body: RequestOTPRequest, address: String?, logger: Logger) async throws -> RequestOTPResponse {
        if let number = body.phoneNumber, InputValidation.phone(number) == nil {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        try await throttle("device-sign-in", address: address)
        let username = body.username
        let requestedAt = clock.now()
        await background.start("device sign-in code", logger: logger) { [self] in
            try await sendSignInCode(to: username, address: address, at: requestedAt, logger: logger)
        }
        let shown = body.phoneNumber.map(Masking.phone) ?? "the phone number on file"
        return RequestOTPResponse(message: "OTP sent to \(shown)", expiresIn: Int(rules.codeLifetime))
    }

    /// Only for a device enrolled for SMS sign-in, and only to a number proven by a code: a key
    /// device's owner never asked for SMS to sign them in (issue S item 2).
    private func sendSignInCode(to username: String, address: String?, at requestedAt: Date, logger: Logger)
        async throws
    {
        guard let user = try await users.named(username), user.status == .active,
            let phone = try await smsSignInPhone(of: user)
        else { return }
        do {
            try await codes.send(
                .sms, purpose: .deviceSignIn, to: phone, userID: user.id,
                flowID: ClientScope.flow(userID: user.id, scope: ClientScope.of(address)), requestedAt: requestedAt)
        } catch let problem as Problem where problem.code == .rateLimited {
            logger.notice("device sign-in code not sent: send limit reached")
        }
    }

    func verifyOTP(_ body: DeviceVerifyOTPRequest, address: String?, origin: RequestOrigin) async throws
        -> DeviceTokenResponse
    {
        guard !body.otp.isEmpty, body.otp.unicodeScalars.count <= 16 else {
            throw InputValidation.failure(["otp": "is required"])
        }
        try await throttle("device-verify", address: address)
        // Unknown users, users without a live code and wrong codes get one answer; only a live
        // code's guard is touched, and its failures never count toward the account lock.
        // A code sent before the device or the number went (a reset, a password change that
        // removed keys) signs nobody in: asked again here, as when it was sent.
        // The code asked for from this client scope, under this scope's guard (issue T).
        let scope = ClientScope.of(address)
        // An unknown name, or one with no SMS sign-in device, looks for a live code as nobody
        // and is refused there: the same statements as a name with no live code (issue V item 6).
        let named = try await users.named(body.username)
        let phone = try await smsSignInPhone(of: named)
        guard let user = named, phone != nil else {
            _ = try await codes.verify(
                body.otp, channel: .sms, purpose: .deviceSignIn, userID: Self.nobody,
                flowID: ClientScope.flow(userID: Self.nobody, scope: scope), origin: origin)
            throw OneTimeCodeService.wrongCode
        }
        var destination = ""
        try await anonymous(refusedAs: OneTimeCodeService.wrongCode) {
            destination = try await codes.verify(
                body.otp, channel: .sms, purpose: .deviceSignIn, userID: user.id,
                flowID: ClientScope.flow(userID: user.id, scope: scope),
                guardFactor: "\(DeviceKeyService.smsSignInFactor):\(scope)", countsTowardAccount: false,
                origin: origin)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await sessions.start(
            user: user, methods: ["sms"], proofs: [.code(.sms, to: destination)], origin: origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "device SMS code", origin: origin)
        return DeviceTokenResponse(
            token: tokens.accessToken.token, message: "Authentication successful",
            refreshToken: tokens.refreshToken.token, expiresAt: tokens.accessToken.expiresAt)
    }

    /// Where `user`'s SMS sign-in codes go: their verified number, only while a device of theirs
    /// is enrolled for SMS sign-in (a key device's owner never asked for SMS to sign them in; a
    /// number typed at registration is not proven).
    /// The devices are read for every name (nobody's for an unknown one), so the answer takes
    /// the same statements whoever asks.
    private func smsSignInPhone(of user: User?) async throws -> String? {
        let devices = try await deviceKeys.store.devices(userID: user?.id ?? Self.nobody)
        guard let phone = user?.verifiedPhone, devices.contains(where: { $0.method == .smsOTP }) else { return nil }
        return phone
    }

    /// The user ID no account has, whose lookups an unknown name makes (issue V item 6).
    static let nobody = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Runs an anonymous sign-in's check: a wrong answer says no more than "wrong", so that it
    /// reads the same for a user who has a live code or challenge and one who has none; a locked
    /// guard is answered exactly as a wrong answer (`refusal`), so a stranger cannot tell that
    /// they, or anyone, set a lock (issue T).
    func anonymous(refusedAs refusal: Problem, _ check: () async throws -> Void) async throws {
        do {
            try await check()
        } catch let problem as Problem where problem.code == .locked {
            throw refusal
        } catch var problem as Problem where problem.status == 401 {
            problem.attemptsRemaining = nil
            throw problem
        }
    }

    func throttle(_ name: String, address: String?) async throws {
        let key = RateLimiter.addressKey(name, address: address)
        try await rateLimiter.require(key, rule: .init(rules.loginPerAddress), now: clock.now())
    }
}
