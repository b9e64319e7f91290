import Foundation
import TwofoldAPI
import TwofoldCore

/// Seed 004's device enrolment and method changes, as a use case: enrol a key (paths A and B)
/// or SMS sign-in (path C), upgrade to a new key, downgrade to SMS when the device's security
/// is gone, unenrol; and the device listings of an owner or an administrator. Every change asks
/// `SignInPolicy`; what a new enrolment lets the session prove never vouches for it.
struct DeviceEnrolment: Sendable {
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let outbox: Outbox
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let secondFactors: SecondFactors
    let factorChanges: FactorChanges
    let policy: SignInPolicy

    /// Enrols a device for `user` (seed 004 paths A and B with a key, C with SMS codes), or
    /// enrols it afresh: the new key replaces the old.
    func enroll(
        _ body: DeviceEnrollRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> DeviceEnrollResponse {
        try Self.requireOwner(user, named: body.username)
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
            caller: caller, user: user)
        // What the new enrolment lets this session prove never vouches for it: the key, or the
        // SMS codes an SMS sign-in device receives.
        try await factorChanges.recordAdding(
            method == .smsOTP ? [keyName, FactorChanges.factorName(method: .sms)] : [keyName], caller: caller)
        let now = clock.now()
        // Seed 001: the PIN may come with the enrolment; a re-enrolment sets it afresh.
        var pinHash: String?
        if let pin = body.pin { pinHash = try await passwords.hash(pin) }
        let fresh = DeviceRecord(
            id: UUID(), userID: userID, deviceID: deviceID, deviceModel: body.deviceModel, method: method,
            publicKey: publicKey, enrolledAt: now, updatedAt: now, pinHash: pinHash)
        let adding = caller.adding
        let inserted =
            try await existing.contains { $0.deviceID == deviceID } ? false : devices.insert(fresh, addedBy: adding)
        var deviceModel = body.deviceModel
        if !inserted, let stored = try await devices.device(deviceID, userID: userID) {
            // Enrolled before, or by a request racing this one: the new key replaces the old.
            try await devices.changeKey(
                deviceRowID: stored.id, method: method, publicKey: publicKey, deviceModel: body.deviceModel,
                enrolledAt: now, pinHash: pinHash, now: now, addedBy: adding)
            deviceModel = deviceModel ?? stored.deviceModel
        }
        try await audit.record(
            .factorAdded, user: userID, detail: "device \(deviceID) (\(method.rawValue))", origin: origin)
        if !inserted {
            // A new enrolment of a device replaces its key, or its SMS sign-in: what they proved
            // ends (SMS codes only when nothing else carries them).
            try await factorChanges.endSessionsThatProved(
                [keyName, FactorMethod.sms.rawValue], userID: userID, keeping: caller.sessionID, origin: origin)
        }
        try await factorChanges.notifyAdded(
            method == .secureEnclave ? "A device key" : "SMS sign-in for a device", user: user)
        return DeviceEnrollResponse(
            deviceId: deviceID, method: method.rawValue, message: "Device enrolled successfully")
    }

    /// Removes a device of `user`'s, with what it signed in with.
    func unenroll(
        _ body: DeviceRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> DeviceMessageResponse {
        try Self.requireOwner(user, named: body.username)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        // Asked before the device is looked up, so the answer does not tell a stale session
        // which devices exist. An SMS device's proof is the SMS code; a key device's, its key.
        let stored = try await deviceKeys.store.device(deviceID, userID: user.id)
        try await policy.require(
            .remove(
                proof: stored?.method == .smsOTP
                    ? FactorChanges.factorName(method: .sms)
                    : FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)),
            caller: caller, user: user)
        guard let device = stored else { throw Problem(status: 404, code: .notFound, title: "No such device") }
        try await deviceKeys.store.delete(deviceRowIDs: [device.id])
        try await audit.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) unenrolled", origin: origin)
        try await factorChanges.removed(
            device.method == .smsOTP ? "SMS sign-in for a device" : "A device key",
            factors: [
                device.method == .smsOTP
                    ? FactorMethod.sms.rawValue
                    : FactorChanges.factorName(method: .deviceKey, deviceID: device.deviceID)
            ], userID: user.id, keeping: caller.sessionID, origin: origin)
        return DeviceMessageResponse(message: "Device unenrolled")
    }

    /// SMS → key, or a new key for a key device (seed 004 scenarios 9 and 10): the old key stops
    /// working at once.
    func upgrade(
        _ body: DeviceUpgradeRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> DeviceMethodResponse {
        try Self.requireOwner(user, named: body.username)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        let publicKey = try DeviceInput.key(body.publicKey, field: "publicKey")
        try await policy.require(.add(kind: .deviceKey), caller: caller, user: user)
        let device = try await deviceKeys.device(deviceID, userID: user.id)
        try await factorChanges.recordAdding(
            [FactorChanges.factorName(method: .deviceKey, deviceID: device.deviceID)],
            caller: caller)
        try await deviceKeys.store.changeKey(
            deviceRowID: device.id, method: .secureEnclave, publicKey: publicKey, deviceModel: nil, enrolledAt: nil,
            pinHash: nil, now: clock.now(), addedBy: caller.adding)
        try await audit.record(
            .factorAdded, user: user.id, detail: "device \(device.deviceID) upgraded to a new key",
            origin: origin)
        // What the old key proved ends; so do SMS codes, when this was the last SMS sign-in device
        // and nothing else carries them.
        try await factorChanges.endSessionsThatProved(
            [
                FactorChanges.factorName(method: .deviceKey, deviceID: device.deviceID),
                device.method == .smsOTP ? FactorMethod.sms.rawValue : "",
            ], userID: user.id, keeping: caller.sessionID, origin: origin)
        try await factorChanges.notifyAdded("A new device key", user: user)
        return DeviceMethodResponse(
            method: DeviceRecord.Method.secureEnclave.rawValue, message: "Upgraded to Secure Enclave MFA")
    }

    /// Key → SMS (seed 004 scenario 8: the app reports that the device's security was removed, so
    /// its key is gone). The key cannot vouch for its own removal, so the policy asks for another
    /// factor, or the password re-entered with a fresh code to the verified phone (or mailbox);
    /// the user is told by SMS and email, so a downgrade they did not make does not go unnoticed.
    func downgrade(
        _ body: DeviceRequest, user: User, caller: AuthenticatedUser, origin: RequestOrigin
    ) async throws -> DeviceMethodResponse {
        try Self.requireOwner(user, named: body.username)
        let deviceID = try DeviceInput.deviceID(body.deviceId)
        try await policy.require(
            .downgrade(proof: FactorChanges.factorName(method: .deviceKey, deviceID: deviceID)),
            caller: caller, user: user)
        let device = try await deviceKeys.device(deviceID, userID: user.id)
        guard let phone = user.verifiedPhone else {
            throw Problem(
                status: 409, code: .conflict, title: "No phone number on file",
                detail: "SMS sign-in needs a verified phone number before a downgrade: confirm one first.")
        }
        let now = clock.now()
        let notice =
            "Twofold: the device key of \(device.deviceModel ?? "your device") was removed and it now signs in "
            + "with SMS codes. If this was not you, sign in and review your devices."
        // The notices first: were the server to stop between, the owner hears of a change that
        // did not happen, rather than not hearing of one that did.
        try await outbox.enqueue(.sms, to: phone, body: notice, now: now)
        if let email = user.verifiedEmail {
            try await outbox.enqueue(
                .email, to: email, subject: "A device of yours now uses SMS codes", body: notice, now: now)
        }
        try await deviceKeys.store.changeKey(
            deviceRowID: device.id, method: .smsOTP, publicKey: nil, deviceModel: nil, enrolledAt: nil, pinHash: nil,
            now: now, addedBy: caller.adding)
        try await audit.record(
            .factorRemoved, user: user.id, detail: "device \(device.deviceID) downgraded to smsOTP",
            origin: origin)
        try await factorChanges.endSessionsThatProved(
            [FactorChanges.factorName(method: .deviceKey, deviceID: device.deviceID)], userID: user.id,
            keeping: caller.sessionID, origin: origin)
        return DeviceMethodResponse(method: DeviceRecord.Method.smsOTP.rawValue, message: "Downgraded to SMS OTP")
    }

    /// The devices of the account named `username`, for its owner or an administrator.
    func devices(named username: String, caller: AuthenticatedUser) async throws -> DeviceListResponse {
        let name = username.lowercased()
        let user = try await users.named(name)
        let allowed = if let user, user.id == caller.userID { true } else { try await isAdmin(caller) }
        guard let user, allowed else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Only the owner or an administrator sees a user's devices.")
        }
        return DeviceListResponse(devices: try await deviceKeys.store.devices(userID: user.id).map(\.dto))
    }

    /// A device's status, for its owner or an administrator.
    func status(of deviceIDText: String, caller: AuthenticatedUser) async throws -> DeviceStatusResponse {
        let deviceID = try DeviceInput.deviceID(deviceIDText)
        let devices = try await deviceKeys.store.devices(deviceID: deviceID)
        var found = devices.first { $0.userID == caller.userID }
        if found == nil, !devices.isEmpty, try await isAdmin(caller) { found = devices.first }
        guard let device = found, let user = try await users.user(id: device.userID) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return DeviceStatusResponse(
            deviceId: device.deviceID, enrolled: true, method: device.method.rawValue,
            hasPublicKey: device.publicKey != nil, phoneNumber: user.phone.map(Masking.phone))
    }

    /// `user` is the account `username` names (the body's); another name is `403`.
    static func requireOwner(_ user: User, named username: String) throws {
        guard [user.username, user.email].contains(username.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw Problem(
                status: 403, code: .forbidden, title: "Not your account",
                detail: "Devices can be changed only by their owner, signed in.")
        }
    }

    /// Whether `caller` is an administrator, as the one gate decides.
    func isAdmin(_ caller: AuthenticatedUser) async throws -> Bool {
        try await policy.isAdministrator(caller)
    }

    func requireVerifiedPhone(_ user: User, given: String?) throws {
        if let given, InputValidation.phone(given) == nil {
            throw InputValidation.failure(["phoneNumber": "must be in E.164 form, like +14155550123"])
        }
        guard let phone = user.verifiedPhone, given == nil || given == phone else {
            throw Problem(
                status: 409, code: .conflict, title: "Phone number not verified",
                detail: "SMS codes go only to a verified number: confirm the phone number first.")
        }
    }
}
