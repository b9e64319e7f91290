import Foundation
import TwofoldAPI

/// Seed 001's device second factor, server side, as a use case: a PIN the server verifies (a slow salted hash;
/// 3 wrong in a row block it) and a biometric-protected key that signs fresh challenges. Every
/// route acts on one of the caller's own devices (`/device/{deviceId}/…`, bearer token), in the
/// seed's order: adding biometrics verifies the PIN first; removing them takes the PIN or a
/// biometric; changing the PIN takes the old PIN or a biometric; a biometric verification
/// unblocks the PIN unless `TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC` is set.
struct DeviceFactors: Sendable {
    let configuration: Configuration
    let passwords: PasswordHasher
    let audit: Auditor
    let deviceKeys: DeviceKeyService
    let rules: ProductRules
    let policy: SignInPolicy

    func status(of device: DeviceRecord) -> DeviceSecondFactorResponse { state(of: device) }

    /// Sets the first PIN, or changes it after proof of the old PIN or a biometric signature.
    /// A malformed or common new PIN is refused before anything is checked or counted.
    func setPIN(_ body: DevicePINChangeRequest, device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceSecondFactorResponse
    {
        try DeviceInput.acceptablePIN(body.newPin, field: "newPin")
        let changing = device.pinHash != nil
        if changing {
            try await deviceKeys.checkProof(
                pin: body.pin, biometric: body.biometric, device: device,
                biometricAllowed: !configuration.disallowPinChangeWithBiometric, origin: origin)
        }
        let hash = try await passwords.hash(body.newPin)
        // A first PIN is set only while there is none, so a PIN set meanwhile is never replaced
        // without proof.
        guard
            try await deviceKeys.setPIN(hash: hash, of: device, onlyIfNone: !changing)
        else {
            throw Problem(
                status: 409, code: .conflict, title: "PIN already set",
                detail: "A PIN was set meanwhile; change it with the current PIN or a biometric.")
        }
        try await audit.record(
            .devicePinSet, user: device.userID,
            detail: "device \(device.deviceID): PIN \(changing ? "changed" : "set")", origin: origin)
        return try await freshState(of: device)
    }

    func verifyPIN(_ pin: String, device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceFactorVerifiedResponse
    {
        try await deviceKeys.checkPIN(pin, device: device, origin: origin)
        return DeviceFactorVerifiedResponse()
    }

    /// Registers the biometric-protected key: the PIN is verified first, so a device without a
    /// PIN cannot turn biometrics on (seed 001: "you cannot toggle biometrics if the user did not
    /// set a PIN"). A new key replaces an old one, whose challenges stop working at once.
    func addBiometrics(_ body: DeviceBiometricsAddRequest, device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceSecondFactorResponse
    {
        let key = try DeviceInput.key(body.publicKey, field: "publicKey")
        try await deviceKeys.checkPIN(body.pin, device: device, origin: origin)
        return try await changeBiometricKey(
            to: key, of: device, audit: .deviceBiometricsAdded, detail: "device \(device.deviceID)", origin: origin)
    }

    func biometricChallenge(for device: DeviceRecord) async throws -> BiometricChallengeResponse {
        try DeviceKeyService.requireBiometrics(device)
        let issued = try await deviceKeys.issueChallenge(for: device, purpose: .biometric, flowID: nil)
        return BiometricChallengeResponse(
            challengeId: issued.challengeId, challenge: issued.challenge, expiresIn: issued.expiresIn)
    }

    /// A biometric verification; it unblocks a blocked PIN unless the server disallows it.
    func verifyBiometrics(_ body: BiometricSignature, device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceFactorVerifiedResponse
    {
        try await deviceKeys.checkBiometric(body, fields: "", device: device, origin: origin)
        var unblocked = false
        if !configuration.disallowPinChangeWithBiometric {
            unblocked = try await deviceKeys.unblockPIN(of: device)
            if unblocked {
                try await audit.record(
                    .devicePinUnblocked, user: device.userID, detail: "device \(device.deviceID): by biometrics",
                    origin: origin)
            }
        }
        return DeviceFactorVerifiedResponse(pinUnblocked: unblocked)
    }

    func removeBiometrics(_ body: DeviceFactorProof, device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceSecondFactorResponse
    {
        try DeviceKeyService.requireBiometrics(device)
        try await deviceKeys.checkProof(
            pin: body.pin, biometric: body.biometric, device: device, origin: origin)
        return try await changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved, detail: "device \(device.deviceID)", origin: origin)
    }

    /// The app reports that the device's biometric set changed, which wiped the biometric key
    /// (seed 001's warning): the key is dropped, the PIN stays. Needs no proof: it only takes a
    /// capability away, and it is audited.
    func biometricsInvalidated(device: DeviceRecord, origin: RequestOrigin) async throws
        -> DeviceSecondFactorResponse
    {
        guard device.biometricKey != nil else { return try await freshState(of: device) }
        return try await changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved,
            detail: "device \(device.deviceID): biometric set changed on the device", origin: origin)
    }

    // MARK: Helpers

    /// The caller's device named `deviceID`; another user's device is `404`, like a missing one.
    /// With `change`, the sign-in policy is asked first (a PIN or biometrics change).
    func callersDevice(
        _ deviceID: String, user: User, caller: AuthenticatedUser, changing change: SignInChange? = nil
    ) async throws -> DeviceRecord {
        if let change { try await policy.require(change, caller: caller, user: user) }
        return try await deviceKeys.device(deviceID, userID: user.id)
    }

    /// Sets (or, with `nil`, removes) the biometric key and retires the device's open biometric
    /// challenges in the same transaction, so a replaced key stops working at once; audits it and
    /// answers the device's state.
    func changeBiometricKey(
        to key: String?, of device: DeviceRecord, audit event: AuditEvent, detail: String, origin: RequestOrigin
    ) async throws -> DeviceSecondFactorResponse {
        try await deviceKeys.setBiometricKey(key, of: device)
        try await audit.record(event, user: device.userID, detail: detail, origin: origin)
        return try await freshState(of: device)
    }

    func state(of device: DeviceRecord) -> DeviceSecondFactorResponse {
        DeviceSecondFactorResponse(
            deviceId: device.deviceID, hasPin: device.pinHash != nil, pinBlocked: device.pinBlocked,
            pinAttemptsRemaining: device.pinBlocked
                ? 0 : max(0, rules.pinAttempts - device.pinFailures),
            hasBiometrics: device.biometricKey != nil,
            biometricsMayUnblockPin: !configuration.disallowPinChangeWithBiometric)
    }

    /// The device as stored now (the checks above update it with SQL), as the answer.
    func freshState(of device: DeviceRecord) async throws -> DeviceSecondFactorResponse {
        state(of: try await deviceKeys.current(device))
    }
}
