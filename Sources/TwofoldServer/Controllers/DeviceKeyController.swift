import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldCore
import Vapor

/// Seed 004's device-bound keys, shapes verbatim: enrolment and method changes (bearer; adding or
/// replacing a key needs step-up), challenge-response sign-in with the device key, SMS sign-in as
/// the fallback, device listings for the owner or an admin. See docs/seed-divergences.md for
/// where it departs from the seed and why.
struct DeviceKeyController: RouteCollection {
    static let factor = "deviceKey"
    /// The guards of seed 004's sign-in, which anyone can try with a username: apart from the
    /// password login's factors, and never counted toward the account lock (issue S item 3).
    static let signInFactor = "deviceSignIn"
    static let smsSignInFactor = "deviceSMS"

    func boot(routes: any RoutesBuilder) throws {
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
        let user = try await Self.owner(named: body.username, request: request)
        let userID = try user.requireID()
        let deviceID = try Self.validDeviceID(body.deviceId)
        if let model = body.deviceModel, model.count > 128 || model.contains(where: \.isNewline) {
            throw InputValidation.failure(["deviceModel": "must be at most 128 characters on one line"])
        }
        guard let method = EnrolledDevice.Method(rawValue: body.method) else {
            throw InputValidation.failure(["method": "must be secureEnclave or smsOTP"])
        }
        var publicKey: String?
        switch method {
        case .secureEnclave:
            guard let text = body.publicKey else {
                throw InputValidation.failure(["publicKey": "is required for secureEnclave"])
            }
            publicKey = try Self.validKey(text, field: "publicKey")
        case .smsOTP:
            try Self.requireVerifiedPhone(user, given: body.phoneNumber)
        }
        if let pin = body.pin { try DeviceSecondFactorController.requireAcceptablePIN(pin, field: "pin") }
        let existing = try await EnrolledDevice.query(on: request.db).filter(\.$userID == userID).all()
        // Another device, or a new key for this one, needs a step-up; so does the first device of
        // an account that already has a second factor (issue S item 1: else a stolen session
        // would add a key and step up with it).
        if existing.isEmpty {
            try await FactorChanges.requireStepUp(for: user, request: request)
        } else {
            try await request.requireStepUp(for: user)
        }
        let now = request.twofold.clock.now()
        let device =
            existing.first { $0.deviceID == deviceID }
            ?? EnrolledDevice(
                userID: userID, deviceID: deviceID, deviceModel: body.deviceModel, method: method,
                publicKey: publicKey, now: now)
        device.method = method
        device.publicKey = publicKey
        device.deviceModel = body.deviceModel ?? device.deviceModel
        device.enrolledAt = now
        if let pin = body.pin {
            // Seed 001: the PIN may come with the enrolment; a re-enrolment sets it afresh.
            device.pinHash = try await request.twofold.passwords.hash(pin)
            device.pinFailures = 0
            device.pinBlocked = false
        }
        try await Self.saveKeyChange(device, now: now, request: request)
        try await AuditLog.record(
            .factorAdded, user: userID, detail: "device \(deviceID) (\(method.rawValue))", request: request)
        try await FactorChanges.added(
            [FactorChanges.factorName(method: Self.factor, deviceID: deviceID)],
            describedAs: method == .secureEnclave
                ? "A device key on \(device.deviceModel ?? "a device")"
                : "SMS sign-in on \(device.deviceModel ?? "a device")", user: user, request: request)
        return try Response.json(
            DeviceEnrollResponse(deviceId: deviceID, method: method.rawValue, message: "Device enrolled successfully"))
    }

    @Sendable func unenroll(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceRequest.self)
        let user = try await Self.owner(named: body.username, request: request)
        let device = try await Self.device(body.deviceId, of: user, request: request)
        try await request.requireStepUp(for: user)
        try await device.delete(on: request.db)
        try await SecondFactors.purgeIfNoneLeft(for: user, request: request)
        try await AuditLog.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) unenrolled", request: request)
        return try Response.json(DeviceMessageResponse(message: "Device unenrolled"))
    }

    /// SMS → key, or a new key for a key device (seed 004 scenarios 9 and 10): the old key stops
    /// working at once.
    @Sendable func upgrade(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceUpgradeRequest.self)
        let user = try await Self.owner(named: body.username, request: request)
        let device = try await Self.device(body.deviceId, of: user, request: request)
        let publicKey = try Self.validKey(body.publicKey, field: "publicKey")
        try await request.requireStepUp(for: user)
        let now = request.twofold.clock.now()
        device.method = .secureEnclave
        device.publicKey = publicKey
        try await Self.saveKeyChange(device, now: now, request: request)
        try await AuditLog.record(
            .factorAdded, user: user.id, detail: "device \(device.deviceID) upgraded to a new key", request: request)
        try await FactorChanges.added(
            [FactorChanges.factorName(method: Self.factor, deviceID: device.deviceID)],
            describedAs: "A new device key on \(device.deviceModel ?? "a device")", user: user, request: request)
        return try Response.json(
            DeviceMethodResponse(
                method: EnrolledDevice.Method.secureEnclave.rawValue, message: "Upgraded to Secure Enclave MFA"))
    }

    /// Key → SMS (seed 004 scenario 8: the app reports that the device's security was removed, so
    /// its key is gone). Needs only the bearer token, because the key can no longer step up;
    /// the user is told by SMS or email, so a downgrade they did not make does not go unnoticed.
    @Sendable func downgrade(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceRequest.self)
        let user = try await Self.owner(named: body.username, request: request)
        let device = try await Self.device(body.deviceId, of: user, request: request)
        guard let phone = user.verifiedPhone else {
            throw Problem(
                status: 409, code: .conflict, title: "No phone number on file",
                detail: "SMS sign-in needs a verified phone number (PUT /api/v1/account/phone) before a downgrade.")
        }
        let now = request.twofold.clock.now()
        device.method = .smsOTP
        device.publicKey = nil
        let notice =
            "Twofold: the device key of \(device.deviceModel ?? "your device") was removed and it now signs in "
            + "with SMS codes. If this was not you, sign in and review your devices."
        // The notices first: were the server to stop between, the owner hears of a change that
        // did not happen, rather than not hearing of one that did.
        try await request.twofold.outbox.enqueue(.sms, to: phone, body: notice, now: now)
        try await request.twofold.outbox.enqueue(
            .email, to: user.email, subject: "A device of yours now uses SMS codes", body: notice, now: now)
        try await Self.saveKeyChange(device, now: now, request: request)
        try await AuditLog.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) downgraded to smsOTP", request: request)
        return try Response.json(
            DeviceMethodResponse(method: EnrolledDevice.Method.smsOTP.rawValue, message: "Downgraded to SMS OTP"))
    }

    // MARK: Listings

    @Sendable func devices(request: Request) async throws -> Response {
        let name = (request.parameters.get("username") ?? "").lowercased()
        let user = try await Self.ownerOrAdmin(named: name, request: request)
        let devices = try await EnrolledDevice.query(on: request.db).filter(\.$userID == user.requireID())
            .sort(\.$enrolledAt).all()
        return try Response.json(DeviceListResponse(devices: devices.map(\.dto)))
    }

    @Sendable func status(request: Request) async throws -> Response {
        let deviceID = try Self.validDeviceID(request.parameters.get("deviceID") ?? "")
        let caller = try request.caller
        var query = EnrolledDevice.query(on: request.db).filter(\.$deviceID == deviceID)
        if try await !Self.isAdmin(caller.userID, request: request) { query = query.filter(\.$userID == caller.userID) }
        guard let device = try await query.first(), let user = try await User.find(device.userID, on: request.db) else {
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
        let deviceID = try Self.validDeviceID(body.deviceId)
        try await Self.throttle("device-sign-in", request: request)
        var method = EnrolledDevice.Method.smsOTP
        if let user = try await Self.user(named: body.username, request: request),
            let device = try await EnrolledDevice.find(deviceID, of: user, on: request.db)
        {
            method = device.method
            if device.method == .secureEnclave, device.publicKey != nil {
                return try Response.json(
                    try await Self.issueChallenge(for: device, purpose: .signIn, flowID: nil, request: request))
            }
        }
        // Stored nowhere, so nothing will accept a signature over it.
        return try Response.json(
            DeviceChallengeResponse(
                method: method.rawValue, challenge: Self.randomChallenge().base64EncodedString(),
                challengeId: UUID().uuidString.lowercased(),
                expiresIn: Int(request.twofold.rules.deviceChallengeLifetime)))
    }

    /// A challenge for the device key as the second step of a password login (`otpFlowId` or
    /// `tempToken` from `POST /auth/login`); it works only for that flow.
    @Sendable func loginFlowChallenge(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceKeyChallengeRequest.self)
        guard let token = body.otpFlowId ?? body.tempToken, !token.isEmpty, token.count <= 128 else {
            throw InputValidation.failure(["otpFlowId": "otpFlowId or tempToken is required"])
        }
        let flow = try await request.twofold.loginFlows.active(token)
        guard let user = try await User.find(flow.userID, on: request.db) else { throw LoginFlowService.unknownFlow }
        let device = try await Self.keyDevice(body.deviceId, of: user, request: request)
        return try Response.json(
            try await Self.issueChallenge(
                for: device, purpose: .loginFlow, flowID: flow.id, request: request))
    }

    /// A challenge for the device key as step-up (`POST /auth/step-up` with `method: deviceKey`).
    @Sendable func stepUpChallenge(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceKeyChallengeRequest.self)
        let user = try await request.currentUser()
        let device = try await Self.keyDevice(body.deviceId, of: user, request: request)
        return try Response.json(
            try await Self.issueChallenge(for: device, purpose: .stepUp, flowID: nil, request: request))
    }

    /// Checks a device-key signature as a second factor of `user`: with `flowID`, over a challenge
    /// of that login flow; without, over a step-up challenge.
    static func checkSecondFactor(
        _ proof: SecondFactors.DeviceKeyProof?, of user: User, flowID: UUID?, request: Request
    ) async throws {
        guard let deviceID = proof?.deviceId, let challengeText = proof?.challengeId,
            let signatureText = proof?.signature
        else {
            throw InputValidation.failure([
                "signature": "deviceId, challengeId and signature are required for deviceKey"
            ])
        }
        let challengeID = try validChallengeID(challengeText)
        let signature = try validSignature(signatureText)
        let device = try await keyDevice(deviceID, of: user, request: request)
        try await check(
            signature, challengeID: challengeID, purpose: flowID == nil ? .stepUp : .loginFlow, flowID: flowID,
            device: device, request: request)
    }

    /// Stores a fresh challenge for `device` and answers it in seed 004's shape.
    static func issueChallenge(
        for device: EnrolledDevice, purpose: DeviceChallenge.Purpose, flowID: UUID?, request: Request
    ) async throws -> DeviceChallengeResponse {
        let now = request.twofold.clock.now()
        let challenge = DeviceChallenge(
            deviceID: try device.requireID(), userID: device.userID, purpose: purpose, flowID: flowID,
            challenge: randomChallenge().base64EncodedString(), now: now,
            expiresAt: now.addingTimeInterval(request.twofold.rules.deviceChallengeLifetime))
        try await challenge.create(on: request.db)
        return DeviceChallengeResponse(
            method: device.method.rawValue, challenge: challenge.challenge,
            challengeId: try challenge.requireID().uuidString.lowercased(),
            expiresIn: Int(request.twofold.rules.deviceChallengeLifetime))
    }

    /// `user`'s device with a device key; an SMS device or a missing one is `404`.
    static func keyDevice(_ deviceID: String, of user: User, request: Request) async throws -> EnrolledDevice {
        let device = try await device(deviceID, of: user, request: request)
        guard device.method == .secureEnclave, device.publicKey != nil else {
            throw Problem(
                status: 404, code: .notFound, title: "No device key",
                detail: "This device signs in with SMS codes; it has no key to sign a challenge.")
        }
        return device
    }

    /// Anyone can call this with a username, so an unknown user, a device without that
    /// challenge and a wrong signature all get the same answer (no `attemptsRemaining`), and
    /// wrong signatures lock only this sign-in, never the account (issue S item 3).
    @Sendable func verifySignature(request: Request) async throws -> Response {
        let body = try request.content.decode(VerifySignatureRequest.self)
        let deviceID = try Self.validDeviceID(body.deviceId)
        let challengeID = try Self.validChallengeID(body.challengeId)
        let signature = try Self.validSignature(body.signature)
        try await Self.throttle("device-verify", request: request)
        guard let user = try await Self.user(named: body.username, request: request),
            let device = try await EnrolledDevice.find(deviceID, of: user, on: request.db)
        else { throw Self.signatureRefused }
        try await Self.anonymous {
            try await Self.check(
                signature, challengeID: challengeID, purpose: .signIn, flowID: nil, device: device, request: request)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await request.twofold.sessions.start(
            user: user.dto, methods: ["hwk", "mfa"], origin: request.origin)
        try await AuditLog.record(.loginSucceeded, user: user.id, detail: "device key \(deviceID)", request: request)
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
        try await Self.throttle("device-sign-in", request: request)
        // Only for a device enrolled for SMS sign-in, and only to a number proven by a code: a
        // key device's owner never asked for SMS to sign them in (issue S item 2).
        if let user = try await Self.user(named: body.username, request: request), let phone = user.verifiedPhone,
            user.status == .active,
            try await EnrolledDevice.query(on: request.db).filter(\.$userID == user.requireID())
                .filter(\.$method == .smsOTP).count() > 0
        {
            do {
                try await request.twofold.codes.send(
                    .sms, purpose: .deviceSignIn, to: phone, userID: try user.requireID(), flowID: nil)
            } catch let problem as Problem where problem.code == .rateLimited {
                request.logger.notice("device sign-in code not sent: send limit reached")
            }
        }
        let shown = body.phoneNumber.map(Masking.phone) ?? "the phone number on file"
        return try Response.json(
            RequestOTPResponse(message: "OTP sent to \(shown)", expiresIn: Int(request.twofold.rules.codeLifetime)))
    }

    @Sendable func verifyOTP(request: Request) async throws -> Response {
        let body = try request.content.decode(DeviceVerifyOTPRequest.self)
        guard !body.otp.isEmpty, body.otp.count <= 16 else { throw InputValidation.failure(["otp": "is required"]) }
        try await Self.throttle("device-verify", request: request)
        // Unknown users, users without a live code and wrong codes get one answer; only a live
        // code's guard is touched, and its failures never count toward the account lock.
        guard let user = try await Self.user(named: body.username, request: request) else {
            throw OneTimeCodeService.wrongCode
        }
        try await Self.anonymous {
            _ = try await request.twofold.codes.verify(
                body.otp, channel: .sms, purpose: .deviceSignIn, userID: try user.requireID(), flowID: nil,
                guardFactor: Self.smsSignInFactor, countsTowardAccount: false, origin: request.origin)
        }
        guard user.status == .active else { throw Problem.accountLocked }
        let tokens = try await request.twofold.sessions.start(user: user.dto, methods: ["sms"], origin: request.origin)
        try await AuditLog.record(.loginSucceeded, user: user.id, detail: "device SMS code", request: request)
        return try Response.json(
            DeviceTokenResponse(
                token: tokens.accessToken.token, message: "Authentication successful",
                refreshToken: tokens.refreshToken.token, expiresAt: tokens.accessToken.expiresAt))
    }

    // MARK: Checking a signature

    /// Checks `signature` over the challenge `challengeID` of `device` under the factor guard and
    /// uses the challenge up: one conditional update, so of many parallel requests with one
    /// signed challenge exactly one succeeds. A challenge of another device, user or purpose is
    /// refused like a wrong signature. A used or expired challenge of this device is refused
    /// before the guard: it is no guess at the key, and it must not hold an attempt slot.
    static func check(
        _ signature: DeviceSignature, challengeID: UUID, purpose: DeviceChallenge.Purpose, flowID: UUID?,
        device: EnrolledDevice, request: Request
    ) async throws {
        let userID = device.userID
        let deviceRowID = try device.requireID()
        let now = request.twofold.clock.now()
        let found = try await DeviceChallenge.find(challengeID, on: request.db)
        // No such challenge of this device: nothing to guess at, so no attempt is counted.
        guard
            let challenge = found.flatMap({
                $0.deviceID == deviceRowID && $0.userID == userID && $0.purpose == purpose && $0.flowID == flowID
                    ? $0 : nil
            })
        else { throw signatureRefused }
        if challenge.usedAt != nil { throw challengeUsed }
        if challenge.expiresAt <= now {
            throw Problem(
                status: 401, code: .expired, title: "Challenge expired",
                detail: "A challenge is valid for 5 minutes; ask for a new one.")
        }
        let guardFactor = purpose == .signIn ? signInFactor : factor
        try await request.twofold.guards.begin(guardFactor, userID: userID)
        guard let keyText = purpose == .biometric ? device.biometricKey : device.publicKey,
            let key = try? DevicePublicKey(base64: keyText), let bytes = Data(base64Encoded: challenge.challenge),
            key.isValidSignature(signature, for: bytes)
        else {
            try await failed(guardFactor, countsTowardAccount: purpose != .signIn, userID: userID, request: request)
        }
        let claimed = try await request.sql.raw(
            """
            UPDATE device_challenges SET used_at = \(bind: now)
            WHERE id = \(bind: challengeID) AND used_at IS NULL AND expires_at > \(bind: now) RETURNING id
            """
        ).all()
        // The signature is right either way, so the attempt is not a failure.
        try await request.twofold.guards.succeeded(guardFactor, userID: userID)
        guard !claimed.isEmpty else { throw challengeUsed }
        device.lastUsedAt = now
        try await device.update(on: request.db)
    }

    static let challengeUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Challenge already used",
        detail: "Each challenge signs in once; ask for a new one.")

    /// A wrong signature counts like a wrong code, answered as `signature_invalid`.
    private static func failed(_ guardFactor: String, countsTowardAccount: Bool, userID: UUID, request: Request)
        async throws -> Never
    {
        do {
            try await request.twofold.guards.failed(
                guardFactor, userID: userID, countsTowardAccount: countsTowardAccount, origin: request.origin)
        } catch var problem as Problem where problem.code == .invalidCode {
            problem.code = .signatureInvalid
            problem.title = "Signature invalid"
            problem.detail = "The signature does not verify for this device and challenge."
            throw problem
        }
    }

    /// Runs an anonymous sign-in's check: a wrong answer says no more than "wrong", so that it
    /// reads the same for a user who has a live code or challenge and one who has none.
    static func anonymous(_ check: () async throws -> Void) async throws {
        do {
            try await check()
        } catch var problem as Problem where problem.status == 401 {
            problem.attemptsRemaining = nil
            throw problem
        }
    }

    static let signatureRefused = Problem(
        status: 401, code: .signatureInvalid, title: "Signature invalid",
        detail: "The signature does not verify for this device and challenge.")

    // MARK: Helpers

    /// The caller's own account, named by `username` in the body; another name is `403`.
    static func owner(named username: String, request: Request) async throws -> User {
        let user = try await request.currentUser()
        guard [user.username, user.email].contains(username.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Devices can be changed only by their owner, signed in.")
        }
        return user
    }

    static func ownerOrAdmin(named username: String, request: Request) async throws -> User {
        let caller = try request.caller
        let admin = try await isAdmin(caller.userID, request: request)
        guard let user = try await self.user(named: username, request: request),
            try user.requireID() == caller.userID || admin
        else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Only the owner or an administrator sees a user's devices.")
        }
        return user
    }

    static func isAdmin(_ userID: UUID, request: Request) async throws -> Bool {
        try await User.find(userID, on: request.db)?.isActiveAdmin == true
    }

    static func user(named username: String, request: Request) async throws -> User? {
        let name = username.trimmingCharacters(in: .whitespaces).lowercased()
        guard !name.isEmpty, name.count <= 254 else { return nil }
        return try await User.find(identifier: name, on: request.db)
    }

    static func device(_ deviceID: String, of user: User, request: Request) async throws -> EnrolledDevice {
        guard let device = try await EnrolledDevice.find(try validDeviceID(deviceID), of: user, on: request.db) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return device
    }

    static func validDeviceID(_ text: String) throws -> String {
        guard (1...128).contains(text.count), text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw InputValidation.failure(["deviceId": "must be 1 to 128 visible characters"]) }
        return text
    }

    /// A P-256 key as X9.63 base64, checked to be on the curve; the canonical base64 is stored.
    static func validKey(_ text: String, field: String) throws -> String {
        do {
            return try DevicePublicKey(base64: text).base64
        } catch {
            throw InputValidation.failure([field: error.description])
        }
    }

    static func validSignature(_ text: String, field: String = "signature") throws -> DeviceSignature {
        do {
            return try DeviceSignature(base64: text)
        } catch {
            throw InputValidation.failure([field: error.description])
        }
    }

    /// The id of a challenge this server issued (`422` naming `field` when it is not a UUID).
    static func validChallengeID(_ text: String, field: String = "challengeId") throws -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw InputValidation.failure([field: "must be the challengeId of a challenge this server issued"])
        }
        return id
    }

    static func requireVerifiedPhone(_ user: User, given: String?) throws {
        if let given, InputValidation.phone(given) == nil {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        guard let phone = user.verifiedPhone, given == nil || given == phone else {
            throw Problem(
                status: 409, code: .conflict, title: "Phone number not verified",
                detail: "SMS codes go only to a verified number: confirm it first with PUT /api/v1/account/phone.")
        }
    }

    static func randomChallenge() -> Data {
        Data(SecureRandom.bytes(32))
    }

    /// Saves a device whose key or method changed, and in the same transaction retires the open
    /// challenges issued for its old key (every one, or only those of `purpose`), so the old key
    /// stops working at once; `alongside` adds more writes to that transaction.
    static func saveKeyChange(
        _ device: EnrolledDevice, now: Date, retiring purpose: DeviceChallenge.Purpose? = nil, request: Request
    ) async throws {
        device.updatedAt = now
        try await request.db.transaction { database in
            try await device.save(on: database)
            var open = try DeviceChallenge.query(on: database).filter(\.$deviceID == device.requireID())
                .filter(\.$usedAt == nil)
            if let purpose { open = open.filter(\.$purpose == purpose) }
            try await open.set(\.$usedAt, to: now).update()
        }
    }

    static func throttle(_ name: String, request: Request) async throws {
        let key = "\(name):ip:\(request.clientAddress ?? "-")"
        if case .limited(let retryAfter) = try await request.twofold.rateLimiter.take(
            key, rule: .init(request.twofold.rules.loginPerAddress), now: request.twofold.clock.now())
        {
            throw Problem.rateLimited(retryAfter)
        }
    }
}
