import Foundation
import TwofoldAPI
import TwofoldCore

/// The device's keys and PIN (seeds 001 and 004): challenges for a device key or a biometric
/// key and the check of a signature over one, and the check of a device PIN. Seed 004's sign-in,
/// the second step, step-up and seed 001's device factor all check through here.
struct DeviceKeyService: Sendable {
    let store: any DeviceStore
    let guards: FactorGuard
    let passwords: PasswordHasher
    let audit: Auditor
    let clock: ServerClock
    let rules: ProductRules
    /// Bounds how many challenges one user asks for (all but the anonymous sign-in's, which
    /// the address's throttle bounds); `nil` in tests that do not count them.
    var challenges: ChallengeThrottle? = nil

    /// The guard of a device key as a second factor (a login flow's second step, step-up).
    static let factor = FactorMethod.deviceKey.rawValue
    /// The guards of seed 004's sign-in, which anyone can try with a username: apart from the
    /// password login's factors, and never counted toward the account lock (issue S item 3).
    static let signInFactor = "deviceSignIn"
    static let smsSignInFactor = "deviceSMS"

    // MARK: Devices

    /// The account's enrolled devices.
    func devices(userID: UUID) async throws -> [DeviceRecord] {
        try await store.devices(userID: userID)
    }

    /// `userID`'s device `deviceID`; a missing one (or another user's) is `404`.
    func device(_ deviceID: String, userID: UUID) async throws -> DeviceRecord {
        guard let device = try await store.device(try DeviceInput.deviceID(deviceID), userID: userID) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return device
    }

    /// `userID`'s device with a device key; an SMS device or a missing one is `404`.
    func keyDevice(_ deviceID: String, userID: UUID) async throws -> DeviceRecord {
        let device = try await device(deviceID, userID: userID)
        guard device.holdsKey else {
            throw Problem(
                status: 404, code: .notFound, title: "No device key",
                detail: "This device signs in with SMS codes; it has no key to sign a challenge.")
        }
        return device
    }

    // MARK: Devices

    /// Every device of `userID`'s, removed; the ones that were.
    func removeAll(userID: UUID) async throws -> [DeviceRecord] {
        let devices = try await store.devices(userID: userID)
        if !devices.isEmpty { _ = try await store.delete(deviceRowIDs: devices.map(\.id)) }
        return devices
    }

    /// `device` as stored now, after the updates a check made.
    func current(_ device: DeviceRecord) async throws -> DeviceRecord {
        guard let stored = try await store.device(id: device.id) else {
            throw Problem(status: 404, code: .notFound, title: "No such device")
        }
        return stored
    }

    /// Sets the device's PIN hash; with `onlyIfNone`, only while it has none (a first PIN
    /// needs no proof, a change does). Whether it was set.
    func setPIN(hash: String, of device: DeviceRecord, onlyIfNone: Bool) async throws -> Bool {
        try await store.setPIN(hash: hash, deviceRowID: device.id, onlyIfNone: onlyIfNone, now: clock.now())
    }

    /// Unblocks the device's PIN; whether it was blocked.
    func unblockPIN(of device: DeviceRecord) async throws -> Bool {
        try await store.unblockPIN(deviceRowID: device.id)
    }

    /// Sets (or, with `nil`, removes) the device's biometric key.
    func setBiometricKey(_ key: String?, of device: DeviceRecord) async throws {
        try await store.changeBiometricKey(key, deviceRowID: device.id, now: clock.now())
    }

    // MARK: Challenges and signatures

    /// Stores a fresh challenge for `device` and answers it in seed 004's shape.
    func issueChallenge(
        for device: DeviceRecord, purpose: DeviceChallengeRecord.Purpose, flowID: UUID?
    ) async throws -> DeviceChallengeResponse {
        if purpose != .signIn { try await challenges?.require(userID: device.userID) }
        let now = clock.now()
        let challenge = DeviceChallengeRecord(
            id: UUID(), deviceRowID: device.id, userID: device.userID, purpose: purpose, flowID: flowID,
            challenge: Self.randomChallenge().base64EncodedString(), createdAt: now,
            expiresAt: now.addingTimeInterval(rules.deviceChallengeLifetime))
        try await store.insertChallenge(challenge)
        return answer(method: device.method, challenge: challenge.challenge, id: challenge.id)
    }

    /// An answer of a challenge's shape that nothing will accept: stored nowhere, and written
    /// as `issueChallenge` writes a real one, so the two cannot be told apart.
    func unanswerableChallenge(method: DeviceRecord.Method) -> DeviceChallengeResponse {
        answer(method: method, challenge: Self.randomChallenge().base64EncodedString(), id: UUID())
    }

    private func answer(method: DeviceRecord.Method, challenge: String, id: UUID) -> DeviceChallengeResponse {
        DeviceChallengeResponse(
            method: method.rawValue, challenge: challenge, challengeId: id.uuidString.lowercased(),
            expiresIn: Int(rules.deviceChallengeLifetime))
    }

    static func randomChallenge() -> Data {
        Data(SecureRandom.bytes(32))
    }

    /// Checks a device-key signature as a second factor of `userID`: with `flowID`, over a
    /// challenge of that login flow; without, over a step-up challenge.
    func checkSecondFactor(
        _ proof: SecondFactors.DeviceKeyProof?, userID: UUID, flowID: UUID?, origin: RequestOrigin
    ) async throws -> Proof {
        guard let deviceID = proof?.deviceId, let challengeText = proof?.challengeId,
            let signatureText = proof?.signature
        else {
            throw InputValidation.failure([
                "signature": "deviceId, challengeId and signature are required for deviceKey"
            ])
        }
        let challengeID = try DeviceInput.challengeID(challengeText)
        let signature = try DeviceInput.signature(signatureText)
        let device = try await keyDevice(deviceID, userID: userID)
        try await check(
            signature, challengeID: challengeID, purpose: flowID == nil ? .stepUp : .loginFlow, flowID: flowID,
            device: device, origin: origin)
        return try Self.proof(of: device)
    }

    /// What a signature by `device`'s key proves: that key, as it is now.
    static func proof(of device: DeviceRecord) throws -> Proof {
        guard let key = device.publicKey else { throw signatureRefused }
        return .deviceKey(device.deviceID, publicKey: key)
    }

    /// Checks `signature` over the challenge `challengeID` of `device` under the factor guard and
    /// uses the challenge up: one conditional update, so of many parallel requests with one
    /// signed challenge exactly one succeeds. A challenge of another device, user or purpose is
    /// refused like a wrong signature. A used or expired challenge of this device is refused
    /// before the guard: it is no guess at the key, and it must not hold an attempt slot.
    func check(
        _ signature: DeviceSignature, challengeID: UUID, purpose: DeviceChallengeRecord.Purpose, flowID: UUID?,
        device: DeviceRecord, origin: RequestOrigin
    ) async throws {
        let now = clock.now()
        // No such challenge of this device: nothing to guess at, so no attempt is counted.
        guard let challenge = try await store.challenge(id: challengeID),
            challenge.deviceRowID == device.id, challenge.userID == device.userID, challenge.purpose == purpose,
            challenge.flowID == flowID
        else { throw Self.signatureRefused }
        if challenge.usedAt != nil { throw Self.challengeUsed }
        if challenge.expiresAt <= now {
            throw Problem(
                status: 401, code: .expired, title: "Challenge expired",
                detail: "A challenge is valid for \(rules.deviceChallengeLifetime.inWords); ask for a new one.")
        }
        // The anonymous sign-in's guard is per client scope: a stranger's wrong signatures lock
        // only their own tries (issue T).
        let guardFactor = purpose == .signIn ? "\(Self.signInFactor):\(ClientScope.of(origin.address))" : Self.factor
        try await guards.begin(guardFactor, userID: device.userID)
        guard let keyText = purpose == .biometric ? device.biometricKey : device.publicKey,
            let key = try? DevicePublicKey(base64: keyText), let bytes = Data(base64Encoded: challenge.challenge),
            key.isValidSignature(signature, for: bytes)
        else {
            try await failed(
                guardFactor, countsTowardAccount: purpose != .signIn, userID: device.userID, origin: origin)
        }
        let claimed = try await store.claimChallenge(id: challengeID, now: now)
        // The signature is right either way, so the attempt is not a failure.
        try await guards.succeeded(guardFactor, userID: device.userID)
        guard claimed else { throw Self.challengeUsed }
        try await store.markUsed(deviceRowID: device.id, now: now)
    }

    /// A wrong signature counts like a wrong code, answered as `signature_invalid`.
    private func failed(_ guardFactor: String, countsTowardAccount: Bool, userID: UUID, origin: RequestOrigin)
        async throws -> Never
    {
        do {
            try await guards.failed(
                guardFactor, userID: userID, countsTowardAccount: countsTowardAccount, origin: origin)
        } catch var problem as Problem where problem.code == .invalidCode {
            // The count of attempts left stays; the rest is `signatureRefused`'s, `type` too, so
            // an anonymous sign-in's refusal reads the same for a real device and an unknown one.
            let refused = Self.signatureRefused
            (problem.type, problem.code, problem.title, problem.detail) = (
                refused.type, refused.code, refused.title, refused.detail
            )
            throw problem
        }
    }

    static let challengeUsed = Problem(
        status: 409, code: .alreadyUsed, title: "Challenge already used",
        detail: "Each challenge signs in once; ask for a new one.")

    static let signatureRefused = Problem(
        status: 401, code: .signatureInvalid, title: "Signature invalid",
        detail: "The signature does not verify for this device and challenge.")

    // MARK: The device's PIN and biometric key (seed 001)

    /// Checks `pin` against the device's PIN. An attempt takes its slot before the hash is
    /// compared, with one conditional update, so however many requests race, at most
    /// `ProductRules.pinAttempts` wrong PINs are ever evaluated; the last of them blocks the PIN
    /// (`403 pin_blocked`). A right PIN starts the count again.
    func checkPIN(_ pin: String, device: DeviceRecord, origin: RequestOrigin) async throws {
        let maximum = rules.pinAttempts
        // Something that cannot be a PIN is bad input: refused before it takes an attempt.
        _ = try DeviceInput.wellFormedPIN(pin, field: "pin")
        guard let hash = device.pinHash else {
            throw Problem(
                status: 409, code: .conflict, title: "No PIN set",
                detail: "Set the device's PIN first.")
        }
        guard let taken = try await store.takePINAttempt(deviceRowID: device.id, maximum: maximum) else {
            throw Self.pinBlocked(maximum)
        }
        if try await passwords.verify(pin, against: hash) {
            try await store.clearPINFailures(deviceRowID: device.id)
            return
        }
        guard taken >= maximum else {
            throw Problem(
                status: 401, code: .invalidCode, title: "Wrong PIN", detail: "That PIN is not right.",
                attemptsRemaining: maximum - taken)
        }
        if try await store.blockPIN(deviceRowID: device.id) {
            try await audit.record(
                .devicePinBlocked, user: device.userID,
                detail: "device \(device.deviceID): \(maximum) wrong PINs in a row", origin: origin)
        }
        throw Self.pinBlocked(maximum)
    }

    /// Checks a signature by the device's biometric key over one of its biometric challenges
    /// (single use; wrong signatures count like wrong codes). `fields` prefixes the names in a
    /// `422` (`biometric.` where the signature is nested).
    func checkBiometric(
        _ proof: BiometricSignature, fields: String = "biometric.", device: DeviceRecord, origin: RequestOrigin
    ) async throws {
        try Self.requireBiometrics(device)
        let challengeID = try DeviceInput.challengeID(proof.challengeId, field: fields + "challengeId")
        let signature = try DeviceInput.signature(proof.signature, field: fields + "signature")
        try await check(
            signature, challengeID: challengeID, purpose: .biometric, flowID: nil, device: device, origin: origin)
    }

    /// Checks the proof of the device's current factor: its PIN, or (when `biometricAllowed`) a
    /// biometric signature; neither is `422`.
    func checkProof(
        pin: String?, biometric: BiometricSignature?, device: DeviceRecord, biometricAllowed: Bool = true,
        origin: RequestOrigin
    ) async throws {
        if let pin {
            try await checkPIN(pin, device: device, origin: origin)
        } else if let biometric {
            guard biometricAllowed else { throw Self.biometricsMayNotReplacePIN }
            try await checkBiometric(biometric, device: device, origin: origin)
        } else {
            throw InputValidation.failure(["pin": "the PIN, or a biometric signature, is required"])
        }
    }

    static func requireBiometrics(_ device: DeviceRecord) throws {
        guard device.biometricKey != nil else {
            throw Problem(
                status: 409, code: .conflict, title: "Biometrics not enabled",
                detail: "This device has no biometric key; add one first.")
        }
    }

    static func pinBlocked(_ attempts: Int) -> Problem {
        Problem(
            status: 403, code: .pinBlocked, title: "PIN blocked",
            detail: "\(attempts) wrong PINs in a row blocked this device's PIN. Verify with biometrics to unblock "
                + "it, or remove the device and enrol it again.")
    }

    static let biometricsMayNotReplacePIN = Problem(
        status: 403, code: .forbidden, title: "Biometrics cannot change the PIN here",
        detail: "This server does not let a biometric verification stand in for the PIN "
            + "(TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC).")
}

/// What a device's identifier, keys, signatures, challenge ids and PINs must look like; each
/// refusal is a `422` naming the field.
enum DeviceInput {
    static func deviceID(_ text: String) throws -> String {
        // Counted in code points, as the OpenAPI document's `maxLength` counts them.
        guard (1...128).contains(text.unicodeScalars.count),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw InputValidation.failure(["deviceId": "must be 1 to 128 visible characters"]) }
        return text
    }

    /// A P-256 key as X9.63 base64, checked to be on the curve; the canonical base64 is stored.
    static func key(_ text: String, field: String) throws -> String {
        do {
            return try DevicePublicKey(base64: text).base64
        } catch {
            throw InputValidation.failure([field: error.description])
        }
    }

    static func signature(_ text: String, field: String = "signature") throws -> DeviceSignature {
        do {
            return try DeviceSignature(base64: text)
        } catch {
            throw InputValidation.failure([field: error.description])
        }
    }

    /// The id of a challenge this server issued.
    static func challengeID(_ text: String, field: String = "challengeId") throws -> UUID {
        guard let id = UUID(uuidString: text) else {
            throw InputValidation.failure([field: "must be the challengeId of a challenge this server issued"])
        }
        return id
    }

    /// 4 to 16 ASCII digits, not common (`TwofoldCore.CommonPIN`, the same rule as the app's `PIN`).
    static func acceptablePIN(_ pin: String, field: String) throws {
        let digits = try wellFormedPIN(pin, field: field)
        guard !CommonPIN.isCommon(digits) else {
            throw InputValidation.failure([field: "is too easy to guess; choose a less common PIN"])
        }
    }

    /// The digit values (0…9) of a PIN of 4 to 16 ASCII digits.
    static func wellFormedPIN(_ pin: String, field: String) throws -> [UInt8] {
        let characters = Array(pin.utf8)
        guard (4...16).contains(characters.count), characters.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw InputValidation.failure([field: "must be 4 to 16 digits"])
        }
        return characters.map { $0 - 0x30 }
    }
}
