import Fluent
import Foundation
import SQLKit
import TwofoldAPI
import TwofoldCore
import Vapor

/// Seed 001's device second factor, server side: a PIN the server verifies (a slow salted hash;
/// 3 wrong in a row block it) and a biometric-protected key that signs fresh challenges. Every
/// route acts on one of the caller's own devices (`/device/{deviceId}/…`, bearer token), in the
/// seed's order: adding biometrics verifies the PIN first; removing them takes the PIN or a
/// biometric; changing the PIN takes the old PIN or a biometric; a biometric verification
/// unblocks the PIN unless `TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC` is set.
struct DeviceSecondFactorController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
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
        let device = try await Self.callersDevice(request)
        return try Response.json(Self.state(of: device, request: request))
    }

    /// Sets the first PIN, or changes it after proof of the old PIN or a biometric signature.
    /// A malformed or common new PIN is refused before anything is checked or counted.
    @Sendable func setPIN(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        let body = try request.content.decode(DevicePINChangeRequest.self)
        try Self.requireAcceptablePIN(body.newPin, field: "newPin")
        let changing = device.pinHash != nil
        if changing {
            try await Self.checkProof(
                pin: body.pin, biometric: body.biometric, device: device,
                biometricAllowed: !request.twofold.configuration.disallowPinChangeWithBiometric, request: request)
        }
        let hash = try await request.twofold.passwords.hash(body.newPin)
        let now = request.twofold.clock.now()
        // A first PIN is set only while there is none, so a PIN set meanwhile is never replaced
        // without proof.
        let written = try await request.sql.raw(
            """
            UPDATE devices SET pin_hash = \(bind: hash), pin_failures = 0, pin_blocked = \(bind: false),
              updated_at = \(bind: now)
            WHERE id = \(bind: device.requireID()) \(unsafeRaw: changing ? "" : "AND pin_hash IS NULL") RETURNING id
            """
        ).all()
        guard !written.isEmpty else {
            throw Problem(
                status: 409, code: .conflict, title: "PIN already set",
                detail: "A PIN was set meanwhile; change it with the current PIN or a biometric.")
        }
        try await AuditLog.record(
            .devicePinSet, user: device.userID,
            detail: "device \(device.deviceID): PIN \(changing ? "changed" : "set")",
            request: request)
        return try await Self.freshState(of: device, request: request)
    }

    @Sendable func verifyPIN(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        let body = try request.content.decode(DeviceFactorProof.self)
        guard let pin = body.pin else { throw InputValidation.failure(["pin": "is required"]) }
        try await Self.checkPIN(pin, device: device, request: request)
        return try Response.json(DeviceFactorVerifiedResponse())
    }

    /// Registers the biometric-protected key: the PIN is verified first, so a device without a
    /// PIN cannot turn biometrics on (seed 001: "you cannot toggle biometrics if the user did not
    /// set a PIN"). A new key replaces an old one, whose challenges stop working at once.
    @Sendable func addBiometrics(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        let body = try request.content.decode(DeviceBiometricsAddRequest.self)
        let key = try DeviceKeyController.validKey(body.publicKey, field: "publicKey")
        try await Self.checkPIN(body.pin, device: device, request: request)
        return try await Self.changeBiometricKey(
            to: key, of: device, audit: .deviceBiometricsAdded, detail: "device \(device.deviceID)", request: request)
    }

    @Sendable func biometricChallenge(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        try Self.requireBiometrics(device)
        let issued = try await DeviceKeyController.issueChallenge(
            for: device, purpose: .biometric, flowID: nil, request: request)
        return try Response.json(
            BiometricChallengeResponse(
                challengeId: issued.challengeId, challenge: issued.challenge, expiresIn: issued.expiresIn))
    }

    /// A biometric verification; it unblocks a blocked PIN unless the server disallows it.
    @Sendable func verifyBiometrics(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        let body = try request.content.decode(BiometricSignature.self)
        try await Self.checkBiometric(body, fields: "", device: device, request: request)
        var unblocked = false
        if !request.twofold.configuration.disallowPinChangeWithBiometric {
            let rows = try await request.sql.raw(
                """
                UPDATE devices SET pin_failures = 0, pin_blocked = \(bind: false)
                WHERE id = \(bind: device.requireID()) AND pin_blocked = \(bind: true) RETURNING id
                """
            ).all()
            unblocked = !rows.isEmpty
            if unblocked {
                try await AuditLog.record(
                    .devicePinUnblocked, user: device.userID, detail: "device \(device.deviceID): by biometrics",
                    request: request)
            }
        }
        return try Response.json(DeviceFactorVerifiedResponse(pinUnblocked: unblocked))
    }

    @Sendable func removeBiometrics(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        let body = try request.content.decode(DeviceFactorProof.self)
        try Self.requireBiometrics(device)
        try await Self.checkProof(pin: body.pin, biometric: body.biometric, device: device, request: request)
        return try await Self.changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved, detail: "device \(device.deviceID)",
            request: request)
    }

    /// The app reports that the device's biometric set changed, which wiped the biometric key
    /// (seed 001's warning): the key is dropped, the PIN stays. Needs no proof: it only takes a
    /// capability away, and it is audited.
    @Sendable func biometricsInvalidated(request: Request) async throws -> Response {
        let device = try await Self.callersDevice(request)
        guard device.biometricKey != nil else { return try await Self.freshState(of: device, request: request) }
        return try await Self.changeBiometricKey(
            to: nil, of: device, audit: .deviceBiometricsRemoved,
            detail: "device \(device.deviceID): biometric set changed on the device", request: request)
    }

    // MARK: Checking the device's factors

    /// Checks `pin` against the device's PIN. An attempt takes its slot before the hash is
    /// compared, with one conditional update, so however many requests race, at most 3 wrong
    /// PINs (`ProductRules.pinAttempts`) are ever evaluated; the last of them blocks the PIN
    /// (`403 pin_blocked`). A right PIN starts the count again.
    static func checkPIN(_ pin: String, device: EnrolledDevice, request: Request) async throws {
        let maximumPINFailures = request.twofold.rules.pinAttempts
        // Something that cannot be a PIN is bad input: refused before it takes an attempt.
        _ = try wellFormedPIN(pin, field: "pin")
        guard let hash = device.pinHash else {
            throw Problem(
                status: 409, code: .conflict, title: "No PIN set",
                detail: "Set the device's PIN first with PUT /api/v1/device/{deviceId}/pin.")
        }
        let sql = try request.sql
        let deviceRowID = try device.requireID()
        let slot = try await sql.raw(
            """
            UPDATE devices SET pin_failures = pin_failures + 1
            WHERE id = \(bind: deviceRowID) AND pin_blocked = \(bind: false)
              AND pin_failures < \(bind: maximumPINFailures)
            RETURNING pin_failures
            """
        ).first()
        guard let taken = try slot?.decode(column: "pin_failures", as: Int.self) else { throw pinBlocked }
        if try await request.twofold.passwords.verify(pin, against: hash) {
            try await sql.raw("UPDATE devices SET pin_failures = 0 WHERE id = \(bind: deviceRowID)").run()
            return
        }
        guard taken >= maximumPINFailures else {
            throw Problem(
                status: 401, code: .invalidCode, title: "Wrong PIN", detail: "That PIN is not right.",
                attemptsRemaining: maximumPINFailures - taken)
        }
        let blocked = try await sql.raw(
            """
            UPDATE devices SET pin_blocked = \(bind: true)
            WHERE id = \(bind: deviceRowID) AND pin_blocked = \(bind: false) RETURNING id
            """
        ).all()
        if !blocked.isEmpty {
            try await AuditLog.record(
                .devicePinBlocked, user: device.userID,
                detail: "device \(device.deviceID): \(maximumPINFailures) wrong PINs in a row", request: request)
        }
        throw pinBlocked
    }

    /// Checks the proof of the device's current factor: its PIN, or (when `biometricAllowed`) a
    /// biometric signature; neither is `422`.
    static func checkProof(
        pin: String?, biometric: BiometricSignature?, device: EnrolledDevice, biometricAllowed: Bool = true,
        request: Request
    ) async throws {
        if let pin {
            try await checkPIN(pin, device: device, request: request)
        } else if let biometric {
            guard biometricAllowed else { throw biometricsMayNotReplacePIN }
            try await checkBiometric(biometric, device: device, request: request)
        } else {
            throw InputValidation.failure(["pin": "the PIN, or a biometric signature, is required"])
        }
    }

    /// Checks a signature by the device's biometric key over one of its biometric challenges
    /// (single use, 5 minutes; wrong signatures count like wrong codes).
    /// `fields` prefixes the names in a `422` (`biometric.` where the signature is nested).
    static func checkBiometric(
        _ proof: BiometricSignature, fields: String = "biometric.", device: EnrolledDevice, request: Request
    ) async throws {
        try requireBiometrics(device)
        let challengeID = try DeviceKeyController.validChallengeID(proof.challengeId, field: fields + "challengeId")
        let signature = try DeviceKeyController.validSignature(proof.signature, field: fields + "signature")
        try await DeviceKeyController.check(
            signature, challengeID: challengeID, purpose: .biometric, flowID: nil, device: device, request: request)
    }

    // MARK: Helpers

    /// The caller's device named in the path; another user's device is `404`, like a missing one.
    static func callersDevice(_ request: Request) async throws -> EnrolledDevice {
        let deviceID = try DeviceKeyController.validDeviceID(request.parameters.get("deviceID") ?? "")
        let user = try await request.currentUser()
        guard let device = try await EnrolledDevice.find(deviceID, of: user, on: request.db) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return device
    }

    /// 4 to 16 ASCII digits, not common (`TwofoldCore.CommonPIN`, the same rule as the app's `PIN`).
    static func requireAcceptablePIN(_ pin: String, field: String) throws {
        let digits = try wellFormedPIN(pin, field: field)
        guard !CommonPIN.isCommon(digits) else {
            throw InputValidation.failure([field: "is too easy to guess; choose a less common PIN"])
        }
    }

    /// The digit values (0…9) of a PIN of 4 to 16 ASCII digits; anything else is `422` naming
    /// `field`.
    static func wellFormedPIN(_ pin: String, field: String) throws -> [UInt8] {
        let characters = Array(pin.utf8)
        guard (4...16).contains(characters.count), characters.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw InputValidation.failure([field: "must be 4 to 16 digits"])
        }
        return characters.map { $0 - 0x30 }
    }

    static func requireBiometrics(_ device: EnrolledDevice) throws {
        guard device.biometricKey != nil else {
            throw Problem(
                status: 409, code: .conflict, title: "Biometrics not enabled",
                detail: "This device has no biometric key; add one with PUT /api/v1/device/{deviceId}/biometrics.")
        }
    }

    /// Sets (or, with `nil`, removes) the biometric key and retires the device's open biometric
    /// challenges in the same transaction, so a replaced key stops working at once; audits it and
    /// answers the device's state.
    static func changeBiometricKey(
        to key: String?, of device: EnrolledDevice, audit event: AuditLog.Event, detail: String, request: Request
    ) async throws -> Response {
        device.biometricKey = key
        try await DeviceKeyController.saveKeyChange(
            device, now: request.twofold.clock.now(), retiring: .biometric, request: request)
        try await AuditLog.record(event, user: device.userID, detail: detail, request: request)
        return try await freshState(of: device, request: request)
    }

    static func state(of device: EnrolledDevice, request: Request) throws -> DeviceSecondFactorResponse {
        DeviceSecondFactorResponse(
            deviceId: device.deviceID, hasPin: device.pinHash != nil, pinBlocked: device.pinBlocked,
            pinAttemptsRemaining: device.pinBlocked
                ? 0 : max(0, request.twofold.rules.pinAttempts - device.pinFailures),
            hasBiometrics: device.biometricKey != nil,
            biometricsMayUnblockPin: !request.twofold.configuration.disallowPinChangeWithBiometric)
    }

    /// The device as stored now (the checks above update it with SQL), as the answer.
    static func freshState(of device: EnrolledDevice, request: Request) async throws -> Response {
        guard let stored = try await EnrolledDevice.find(try device.requireID(), on: request.db) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return try Response.json(state(of: stored, request: request))
    }

    static let pinBlocked = Problem(
        status: 403, code: .pinBlocked, title: "PIN blocked",
        detail: "3 wrong PINs in a row blocked this device's PIN. Verify with biometrics to unblock it, "
            + "or remove the device and enrol it again.")

    static let biometricsMayNotReplacePIN = Problem(
        status: 403, code: .forbidden, title: "Biometrics cannot change the PIN here",
        detail: "This server does not let a biometric verification stand in for the PIN "
            + "(TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC).")
}
