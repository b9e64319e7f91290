import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

/// Seed 004's device-bound keys, shapes verbatim: enrolment and method changes (bearer; adding or
/// replacing a key needs step-up), challenge-response sign-in with the device key, SMS sign-in as
/// the fallback, device listings for the owner or an admin. See docs/seed-divergences.md for
/// where it departs from the seed and why.
struct DeviceKeyController: EndpointCollection {
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let rateLimiter: RateLimiter
    let sessions: SessionService
    let loginFlows: LoginFlowService
    let outbox: Outbox
    let codes: OneTimeCodeService
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let rules: ProductRules
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy

    func boot(routes: EndpointRoutes) {
        routes.on(API.DeviceKeys.enroll, use: enroll)
        routes.on(API.DeviceKeys.unenroll, use: unenroll)
        routes.on(API.DeviceKeys.upgrade, use: upgrade)
        routes.on(API.DeviceKeys.downgrade, use: downgrade)
        routes.on(API.DeviceKeys.devices, use: devices)
        routes.on(API.DeviceKeys.status, use: status)
        routes.on(API.DeviceKeys.initiate, use: initiate)
        routes.on(API.DeviceKeys.verifySignature, use: verifySignature)
        routes.on(API.DeviceKeys.requestOTP, use: requestOTP)
        routes.on(API.DeviceKeys.verifyOTP, use: verifyOTP)
        routes.on(API.SecondStep.deviceKeyChallenge, use: loginFlowChallenge)
        routes.on(API.Auth.stepUpDeviceKeyChallenge, use: stepUpChallenge)
    }

    // MARK: Enrolment

    @Sendable func enroll(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceEnrollRequest.self)
        let user = try await owner(named: body.username, request: request)
        let userID = user.id
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        if let model = body.deviceModel,
            model.unicodeScalars.count > 128 || model.unicodeScalars.contains(where: InputValidation.isControlOrBidi)
        {
            throw InputValidation.failure([
                "deviceModel": "must be at most 128 characters on one line, without control characters"
            ])
        }
        guard let method = DeviceRecord.Method(rawValue: body.method) else {
            throw InputValidation.failure(["method": "must be secureEnclave or smsOTP"])
        }
        var publicKey: String?
        switch method {
        case .secureEnclave:
            guard let text = body.publicKey else {
                throw InputValidation.failure(["publicKey": "is required for secureEnclave"])
            }
            publicKey = try DeviceInput.key(text, field: "publicKey")
        case .smsOTP:
            try requireVerifiedPhone(user, given: body.phoneNumber)
        }
        if let pin = body.pin { try DeviceInput.acceptablePIN(pin, field: "pin") }
        let devices = deviceKeys.store
        let existing = try await devices.devices(userID: userID)
        let keyName = FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)
        // A key signs in without the password; so does an SMS sign-in device with a code. Enrolling
        // SMS sign-in over a device's key takes the key away: that is a downgrade (issue T review).
        let replacesKey = existing.contains { $0.deviceID == deviceID && $0.method == .secureEnclave }
        try await policy.require(
            method == .smsOTP && replacesKey
                ? .downgrade(proof: keyName) : .add(kind: method == .secureEnclave ? .deviceKey : .sms),
            caller: request.caller, user: user)
        // What the new enrolment lets this session prove never vouches for it: the key, or the
        // SMS codes an SMS sign-in device receives.
        try await factorChanges.recordAdding(
            method == .smsOTP ? [keyName, FactorChanges.factorName(method: .sms)] : [keyName], caller: request.caller)
        let now = clock.now()
        // Seed 001: the PIN may come with the enrolment; a re-enrolment sets it afresh.
        var pinHash: String?
        if let pin = body.pin { pinHash = try await passwords.hash(pin) }
        let fresh = DeviceRecord(
            id: UUID(), userID: userID, deviceID: deviceID, deviceModel: body.deviceModel, method: method,
            publicKey: publicKey, enrolledAt: now, updatedAt: now, pinHash: pinHash)
        let inserted = try await existing.contains { $0.deviceID == deviceID } ? false : devices.insert(fresh)
        var deviceModel = body.deviceModel
        if !inserted, let stored = try await devices.device(deviceID, userID: userID) {
            // Enrolled before, or by a request racing this one: the new key replaces the old.
            try await devices.changeKey(
                deviceRowID: stored.id, method: method, publicKey: publicKey, deviceModel: body.deviceModel,
                enrolledAt: now, pinHash: pinHash, now: now)
            deviceModel = deviceModel ?? stored.deviceModel
        }
        try await audit.record(
            .factorAdded, user: userID, detail: "device \(deviceID) (\(method.rawValue))", origin: request.origin)
        try await factorChanges.notifyAdded(
            method == .secureEnclave ? "A device key" : "SMS sign-in for a device", user: user)
        return try Response.json(
            DeviceEnrollResponse(deviceId: deviceID, method: method.rawValue, message: "Device enrolled successfully"))
    }

    @Sendable func unenroll(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceRequest.self)
        let user = try await owner(named: body.username, request: request)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        // Asked before the device is looked up, so the answer does not tell a stale session
        // which devices exist. An SMS device's proof is the SMS code; a key device's, its key.
        let stored = try await deviceKeys.store.device(deviceID, userID: user.id)
        try await policy.require(
            .remove(
                proof: stored?.method == .smsOTP
                    ? FactorChanges.factorName(method: .sms)
                    : FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)),
            caller: request.caller, user: user)
        guard let device = stored else { throw Problem(status: 404, code: .notFound, title: "No such device") }
        try await deviceKeys.store.delete(deviceRowIDs: [device.id])
        try await secondFactors.purgeIfNoneLeft(userID: user.id, origin: request.origin)
        try await audit.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) unenrolled", origin: request.origin)
        return try Response.json(DeviceMessageResponse(message: "Device unenrolled"))
    }

    /// SMS → key, or a new key for a key device (seed 004 scenarios 9 and 10): the old key stops
    /// working at once.
    @Sendable func upgrade(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceUpgradeRequest.self)
        let user = try await owner(named: body.username, request: request)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        let publicKey = try DeviceInput.key(body.publicKey, field: "publicKey")
        try await policy.require(.add(kind: .deviceKey), caller: request.caller, user: user)
        let device = try await deviceKeys.device(deviceID, userID: user.id)
        try await factorChanges.recordAdding(
            [FactorChanges.factorName(method: .deviceKey, deviceID: device.deviceID)],
            caller: request.caller)
        try await deviceKeys.store.changeKey(
            deviceRowID: device.id, method: .secureEnclave, publicKey: publicKey, deviceModel: nil, enrolledAt: nil,
            pinHash: nil, now: clock.now())
        try await audit.record(
            .factorAdded, user: user.id, detail: "device \(device.deviceID) upgraded to a new key",
            origin: request.origin)
        try await factorChanges.notifyAdded("A new device key", user: user)
        return try Response.json(
            DeviceMethodResponse(
                method: DeviceRecord.Method.secureEnclave.rawValue, message: "Upgraded to Secure Enclave MFA"))
    }

    /// Key → SMS (seed 004 scenario 8: the app reports that the device's security was removed, so
    /// its key is gone). The key cannot vouch for its own removal, so the policy asks for another
    /// factor, or the password re-entered with a fresh code to the verified phone (or mailbox);
    /// the user is told by SMS and email, so a downgrade they did not make does not go unnoticed.
    @Sendable func downgrade(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceRequest.self)
        let user = try await owner(named: body.username, request: request)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        try await policy.require(
            .downgrade(proof: FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)),
            caller: request.caller, user: user)
        let device = try await deviceKeys.device(deviceID, userID: user.id)
        guard let phone = user.verifiedPhone else {
            throw Problem(
                status: 409, code: .conflict, title: "No phone number on file",
                detail: "SMS sign-in needs a verified phone number (PUT /api/v1/account/phone) before a downgrade.")
        }
        let now = clock.now()
        let notice =
            "Twofold: the device key of \(device.deviceModel ?? "your device") was removed and it now signs in "
            + "with SMS codes. If this was not you, sign in and review your devices."
        // The notices first: were the server to stop between, the owner hears of a change that
        // did not happen, rather than not hearing of one that did.
        try await outbox.enqueue(.sms, to: phone, body: notice, now: now)
        try await outbox.enqueue(
            .email, to: user.email, subject: "A device of yours now uses SMS codes", body: notice, now: now)
        try await deviceKeys.store.changeKey(
            deviceRowID: device.id, method: .smsOTP, publicKey: nil, deviceModel: nil, enrolledAt: nil, pinHash: nil,
            now: now)
        try await audit.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) downgraded to smsOTP",
            origin: request.origin)
        return try Response.json(
            DeviceMethodResponse(method: DeviceRecord.Method.smsOTP.rawValue, message: "Downgraded to SMS OTP"))
    }

    // MARK: Listings

    @Sendable func devices(request: Request) async throws -> Response {
        let name = (request.parameters.get("username") ?? "").lowercased()
        let user = try await ownerOrAdmin(named: name, request: request)
        let devices = try await deviceKeys.store.devices(userID: user.id)
        return try Response.json(DeviceListResponse(devices: devices.map(\.dto)))
    }

    @Sendable func status(request: Request) async throws -> Response {
        let deviceID = try DeviceInput.deviceID(request.parameters.get("deviceID") ?? "")
        let caller = try request.caller
        let admin = try await isAdmin(caller.userID, request: request)
        let found = try await deviceKeys.store.devices(deviceID: deviceID)
            .first { admin || $0.userID == caller.userID }
        guard let device = found, let user = try await users.user(id: device.userID) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return try Response.json(
            DeviceStatusResponse(
                deviceId: device.deviceID, enrolled: true, method: device.method.rawValue,
                hasPublicKey: device.publicKey != nil, phoneNumber: user.phone.map(Masking.phone)))
    }

    // MARK: Sign-in

    /// A challenge for the device key. Unknown users and devices get an answer of the same shape
    /// (an SMS device's, with a challenge that nothing will accept), so this call does not tell
    /// who is enrolled.
    @Sendable func initiate(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceRequest.self)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        try await throttle("device-sign-in", request: request)
        var method = DeviceRecord.Method.smsOTP
        if let user = try await user(named: body.username, request: request),
            let device = try await deviceKeys.store.device(deviceID, userID: user.id)
        {
            method = device.method
            if device.method == .secureEnclave, device.publicKey != nil {
                return try Response.json(
                    try await deviceKeys.issueChallenge(for: device, purpose: .signIn, flowID: nil))
            }
        }
        return try Response.json(deviceKeys.unanswerableChallenge(method: method))
    }

    /// A challenge for the device key as the second step of a password login (`otpFlowId` or
    /// `tempToken` from `POST /auth/login`); it works only for that flow.
    @Sendable func loginFlowChallenge(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceKeyChallengeRequest.self)
        let flow = try await loginFlows.active(
            try LoginFlowService.token(otpFlowId: body.otpFlowId, tempToken: body.tempToken))
        let device = try await deviceKeys.keyDevice(body.deviceId, userID: flow.userID)
        return try Response.json(try await deviceKeys.issueChallenge(for: device, purpose: .loginFlow, flowID: flow.id))
    }

    /// A challenge for the device key as step-up (`POST /auth/step-up` with `method: deviceKey`).
    @Sendable func stepUpChallenge(request: Request) async throws -> Response {
        let body = try request.content.decode(StepUpDeviceKeyChallengeRequest.self)
        let user = try await request.currentUser(in: users)
        let device = try await deviceKeys.keyDevice(body.deviceId, userID: user.id)
        return try Response.json(try await deviceKeys.issueChallenge(for: device, purpose: .stepUp, flowID: nil))
    }

    /// Anyone can call this with a username, so an unknown user, a device without that
    /// challenge and a wrong signature all get the same answer (no `attemptsRemaining`), and
    /// wrong signatures lock only this sign-in, never the account (issue S item 3).
    @Sendable func verifySignature(request: Request) async throws -> Response {
        let body = try request.content.decode(VerifySignatureRequest.self)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        let challengeID = try DeviceInput.challengeID(body.challengeId)
        let signature = try DeviceInput.signature(body.signature)
        try await throttle("device-verify", request: request)
        guard let user = try await user(named: body.username, request: request),
            let device = try await deviceKeys.store.device(deviceID, userID: user.id)
        else { throw DeviceKeyService.signatureRefused }
        try await anonymous(refusedAs: DeviceKeyService.signatureRefused) {
            try await deviceKeys.check(
                signature, challengeID: challengeID, purpose: .signIn, flowID: nil, device: device,
                origin: request.origin)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await sessions.start(
            user: user.dto, methods: ["hwk", "mfa"],
            proofs: [FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)],
            origin: request.origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "device key \(deviceID)", origin: request.origin)
        return try Response.json(
            DeviceTokenResponse(
                token: tokens.accessToken.token, message: "Authentication successful",
                refreshToken: tokens.refreshToken.token, expiresAt: tokens.accessToken.expiresAt))
    }

    /// SMS fallback: a code to the phone on file of a user with an enrolled device. The answer is
    /// the same whether or not the user exists, has a device, or is inside the resend cooldown;
    /// the number shown is the one asked about, masked, never the one on file.
    @Sendable func requestOTP(request: Request) async throws -> Response {
        let body = try request.content.decode(RequestOTPRequest.self)
        if let number = body.phoneNumber, InputValidation.phone(number) == nil {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        try await throttle("device-sign-in", request: request)
        // Only for a device enrolled for SMS sign-in, and only to a number proven by a code: a
        // key device's owner never asked for SMS to sign them in (issue S item 2).
        if let user = try await user(named: body.username, request: request), let phone = user.verifiedPhone,
            user.status == .active,
            try await deviceKeys.store.devices(userID: user.id).contains(where: { $0.method == .smsOTP }
            )
        {
            do {
                try await codes.send(
                    .sms, purpose: .deviceSignIn, to: phone, userID: user.id,
                    flowID: ClientScope.flow(userID: user.id, scope: ClientScope.of(request.clientAddress)))
            } catch let problem as Problem where problem.code == .rateLimited {
                request.logger.notice("device sign-in code not sent: send limit reached")
            }
        }
        let shown = body.phoneNumber.map(Masking.phone) ?? "the phone number on file"
        return try Response.json(
            RequestOTPResponse(message: "OTP sent to \(shown)", expiresIn: Int(rules.codeLifetime)))
    }

    @Sendable func verifyOTP(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceVerifyOTPRequest.self)
        guard !body.otp.isEmpty, body.otp.unicodeScalars.count <= 16 else {
            throw InputValidation.failure(["otp": "is required"])
        }
        try await throttle("device-verify", request: request)
        // Unknown users, users without a live code and wrong codes get one answer; only a live
        // code's guard is touched, and its failures never count toward the account lock.
        guard let user = try await user(named: body.username, request: request) else {
            throw OneTimeCodeService.wrongCode
        }
        // The code asked for from this client scope, under this scope's guard (issue T).
        let scope = ClientScope.of(request.clientAddress)
        try await anonymous(refusedAs: OneTimeCodeService.wrongCode) {
            _ = try await codes.verify(
                body.otp, channel: .sms, purpose: .deviceSignIn, userID: user.id,
                flowID: ClientScope.flow(userID: user.id, scope: scope),
                guardFactor: "\(DeviceKeyService.smsSignInFactor):\(scope)", countsTowardAccount: false,
                origin: request.origin)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await sessions.start(
            user: user.dto, methods: ["sms"], proofs: [FactorChanges.factorName(method: .sms)], origin: request.origin)
        try await audit.record(.loginSucceeded, user: user.id, detail: "device SMS code", origin: request.origin)
        return try Response.json(
            DeviceTokenResponse(
                token: tokens.accessToken.token, message: "Authentication successful",
                refreshToken: tokens.refreshToken.token, expiresAt: tokens.accessToken.expiresAt))
    }

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

    // MARK: Helpers

    /// The caller's own account, named by `username` in the body; another name is `403`.
    func owner(named username: String, request: Request) async throws -> User {
        let user = try await request.currentUser(in: users)
        guard [user.username, user.email].contains(username.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Devices can be changed only by their owner, signed in.")
        }
        return user
    }

    func ownerOrAdmin(named username: String, request: Request) async throws -> User {
        let caller = try request.caller
        let admin = try await isAdmin(caller.userID, request: request)
        guard let user = try await self.user(named: username, request: request),
            user.id == caller.userID || admin
        else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Only the owner or an administrator sees a user's devices.")
        }
        return user
    }

    func isAdmin(_ userID: UUID, request: Request) async throws -> Bool {
        try await users.user(id: userID)?.isActiveAdmin == true
    }

    func user(named username: String, request: Request) async throws -> User? {
        let name = username.trimmingCharacters(in: .whitespaces).lowercased()
        guard !name.isEmpty, name.count <= 254 else { return nil }
        return try await users.user(identifier: name)
    }

    func requireVerifiedPhone(_ user: User, given: String?) throws {
        if let given, InputValidation.phone(given) == nil {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        guard let phone = user.verifiedPhone, given == nil || given == phone else {
            throw Problem(
                status: 409, code: .conflict, title: "Phone number not verified",
                detail: "SMS codes go only to a verified number: confirm it first with PUT /api/v1/account/phone.")
        }
    }

    func throttle(_ name: String, request: Request) async throws {
        let key = "\(name):ip:\(request.clientAddress ?? "-")"
        try await rateLimiter.require(key, rule: .init(rules.loginPerAddress), now: clock.now())
    }
}
