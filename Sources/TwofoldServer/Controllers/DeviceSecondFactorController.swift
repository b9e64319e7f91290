import Foundation
import TwofoldAPI
import Vapor

/// Seed 001's device second factor, server side: a PIN the server verifies (a slow salted hash;
/// 3 wrong in a row block it) and a biometric-protected key that signs fresh challenges. Every
/// route acts on one of the caller's own devices (`/device/{deviceId}/…`, bearer token), in the
/// seed's order: adding biometrics verifies the PIN first; removing them takes the PIN or a
/// biometric; changing the PIN takes the old PIN or a biometric; a biometric verification
/// unblocks the PIN unless `TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC` is set.
struct DeviceSecondFactorController: EndpointCollection {
    let configuration: Configuration
    let clock: ServerClock
    let passwords: PasswordHasher
    let audit: Auditor
    let users: any UserStore
    let deviceKeys: DeviceKeyService
    let rules: ProductRules
    let policy: SignInPolicy

    func boot(routes: EndpointRoutes) {
        routes.on(API.DeviceFactors.status, use: status)
        routes.on(API.DeviceFactors.setPIN, use: setPIN)
        routes.on(API.DeviceFactors.verifyPIN, use: verifyPIN)
        routes.on(API.DeviceFactors.addBiometrics, use: addBiometrics)
        routes.on(API.DeviceFactors.biometricChallenge, use: biometricChallenge)
        routes.on(API.DeviceFactors.verifyBiometrics, use: verifyBiometrics)
        routes.on(API.DeviceFactors.removeBiometrics, use: removeBiometrics)
        routes.on(API.DeviceFactors.biometricsInvalidated, use: biometricsInvalidated)
    }

    @Sendable func status(request: Request) async throws -> Response {
        let device = try await callersDevice(request)
        return try Response.json(state(of: device, request: request))
    }

    /// Sets the first PIN, or changes it after proof of the old PIN or a biometric signature.
    /// A malformed or common new PIN is refused before anything is checked or counted.
    @Sendable func setPIN(request: Request) async throws -> Response {
        let device = try await callersDevice(request, changing: .configure)
        let body = try request.content.decode(DevicePINChangeRequest.self)
        try DeviceInput.acceptablePIN(body.newPin, field: "newPin")
        let changing = device.pinHash != nil
        if changing {
            try await deviceKeys.checkProof(
                pin: body.pin, biometric: body.biometric, device: device,
                biometricAllowed: !configuration.disallowPinChangeWithBiometric, origin: request.origin)
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
            detail: "device \(device.deviceID): PIN \(changing ? "changed" : "set")", origin: request.origin)
        return try await freshState(of: device, request: request)
    }

    @Sendable func verifyPIN(request: Request) async throws -> Response {
        let device = try await callersDevice(request)
        let body = try request.content.decode(DevicePINRequest.self)
        try await deviceKeys.checkPIN(body.pin, device: device, origin: request.origin)
        return try Response.json(DeviceFactorVerifiedResponse())
    }

    /// Registers the biometric-protected key: the PIN is verified first, so a device without a
    /// PIN cannot turn biometrics on (seed 001: "you cannot toggle biometrics if the user did not
    /// set a PIN"). A new key replaces an old one, whose challenges stop working at once.
    @Sendable func addBiometrics(request: Request) async throws -> Response {
        let device = try await callersDevice(request, changing: .configure)
        let body = try request.content.decode(DeviceBiometricsAddRequest.self)
        let key = try DeviceInput.key(body.publicKey, field: "publicKey")
        try await deviceKeys.checkPIN(body.pin, device: device, origin: request.origin)
        return try await changeBiometricKey(
            to: key, of: device, audit: .deviceBiometricsAdded, detail: "device \(device.deviceID)", request: request)
    }

    @Sendable func biometricChallenge(request: Request) async throws -> Response {
        let device = try await callersDevice(request)
        try DeviceKeyService.requireBiometrics(device)
        let issued = try await deviceKeys.issueChallenge(for: device, purpose: .biometric, flowID: nil)
        return try Response.json(
            BiometricChallengeResponse(
                challengeId: issued.challengeId, challenge: issued.challenge, expiresIn: issued.expiresIn))
    }

    /// A biometric verification; it unblocks a blocked PIN unless the server disallows it.
    @Sendable func verifyBiometrics(request: Request) async throws -> Response {
        let device = try await callersDevice(request, changing: .configure)
        let body = try request.content.decode(BiometricSignature.self)
        try await deviceKeys.checkBiometric(body, fields: "", device: device, origin: request.origin)
        var unblocked = false
        if !configuration.disallowPinChangeWithBiometric {
            unblocked = try await deviceKeys.unblockPIN(of: device)
            if unblocked {
                try await audit.record(
                    .devicePinUnblocked, user: device.userID, detail: "device \(device.deviceID): by biometrics",
                    origin: request.origin)
            }
        }
        return try Response.json(DeviceFactorVerifiedResponse(pinUnblocked: unblocked))
    }

    @Sendable func removeBiometrics(request: Request) async throws -> Response {
        let device = try await callersDevice(request, changing: .configure)
        let body = try request.content.decode(DeviceFactorProof.self)
        try DeviceKeyService.requireBiometrics(device)
        try await deviceKeys.checkProof(
            pin: body.pin, biometric: body.biometric, device: device, origin: request.origin)
        return try await changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved, detail: "device \(device.deviceID)",
            request: request)
    }

    /// The app reports that the device's biometric set changed, which wiped the biometric key
    /// (seed 001's warning): the key is dropped, the PIN stays. Needs no proof: it only takes a
    /// capability away, and it is audited.
    @Sendable func biometricsInvalidated(request: Request) async throws -> Response {
        let device = try await callersDevice(request, changing: .signOut)
        guard device.biometricKey != nil else { return try await freshState(of: device, request: request) }
        return try await changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved,
            detail: "device \(device.deviceID): biometric set changed on the device", request: request)
    }

    // MARK: Helpers

    /// The caller's device named in the path; another user's device is `404`, like a missing one.
    /// With `change`, the sign-in policy is asked first (a PIN or biometrics change).
    func callersDevice(_ request: Request, changing change: SignInChange? = nil) async throws -> DeviceRecord {
        let user = try await request.currentUser(in: users)
        if let change { try await policy.require(change, caller: request.caller, user: user) }
        return try await deviceKeys.device(request.parameters.get("deviceID") ?? "", userID: user.id)
    }

    /// Sets (or, with `nil`, removes) the biometric key and retires the device's open biometric
    /// challenges in the same transaction, so a replaced key stops working at once; audits it and
    /// answers the device's state.
    func changeBiometricKey(
        to key: String?, of device: DeviceRecord, audit event: AuditLog.Event, detail: String, request: Request
    ) async throws -> Response {
        try await deviceKeys.setBiometricKey(key, of: device)
        try await audit.record(event, user: device.userID, detail: detail, origin: request.origin)
        return try await freshState(of: device, request: request)
    }

    func state(of device: DeviceRecord, request: Request) throws -> DeviceSecondFactorResponse {
        DeviceSecondFactorResponse(
            deviceId: device.deviceID, hasPin: device.pinHash != nil, pinBlocked: device.pinBlocked,
            pinAttemptsRemaining: device.pinBlocked
                ? 0 : max(0, rules.pinAttempts - device.pinFailures),
            hasBiometrics: device.biometricKey != nil,
            biometricsMayUnblockPin: !configuration.disallowPinChangeWithBiometric)
    }

    /// The device as stored now (the checks above update it with SQL), as the answer.
    func freshState(of device: DeviceRecord, request: Request) async throws -> Response {
        try Response.json(state(of: try await deviceKeys.current(device), request: request))
    }
}
