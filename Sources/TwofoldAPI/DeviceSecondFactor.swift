import Foundation

// Seed 001's device second factor, server side, under `/device/{deviceId}/…` (bearer token of the
// device's owner): a PIN the server verifies (blocked after 3 wrong in a row) and a
// biometric-protected P-256 key that signs fresh challenges.

/// A signature by the device's biometric key over a challenge from
/// `POST /device/{deviceId}/biometrics/challenge` (ECDSA-SHA256, DER or raw 64 bytes, base64).
public struct BiometricSignature: Codable, Sendable, Equatable {
    public var challengeId: String
    public var signature: String

    public init(challengeId: String, signature: String) {
        self.challengeId = challengeId
        self.signature = signature
    }
}

/// Proof of the device's current second factor: its PIN or a biometric signature (one of them).
/// `POST /device/{deviceId}/pin/verify` takes only `pin`;
/// `POST /device/{deviceId}/biometrics/remove` takes either.
/// `POST /device/{deviceId}/pin/verify`: the device's PIN.
public struct DevicePINRequest: Codable, Sendable, Equatable {
    public var pin: String

    public init(pin: String) { self.pin = pin }
}

public struct DeviceFactorProof: Codable, Sendable, Equatable {
    public var pin: String?
    public var biometric: BiometricSignature?

    public init(pin: String? = nil, biometric: BiometricSignature? = nil) {
        self.pin = pin
        self.biometric = biometric
    }
}

/// `PUT /device/{deviceId}/pin`: sets the first PIN (`newPin` alone), or changes it after proof
/// of the current one (`pin`) or of biometrics (`biometric`).
public struct DevicePINChangeRequest: Codable, Sendable, Equatable {
    /// 4 to 16 digits, not a common PIN.
    public var newPin: String
    /// The current PIN, when changing it.
    public var pin: String?
    /// A biometric signature instead of the current PIN.
    public var biometric: BiometricSignature?

    public init(newPin: String, pin: String? = nil, biometric: BiometricSignature? = nil) {
        self.newPin = newPin
        self.pin = pin
        self.biometric = biometric
    }
}

/// `PUT /device/{deviceId}/biometrics`: registers the biometric-protected key after the PIN is
/// verified (seed 001's order: PIN first, then biometrics).
public struct DeviceBiometricsAddRequest: Codable, Sendable, Equatable {
    /// base64 of the uncompressed X9.63 P-256 point of the biometric-protected key.
    public var publicKey: String
    public var pin: String

    public init(publicKey: String, pin: String) {
        self.publicKey = publicKey
        self.pin = pin
    }
}

/// The answer of `POST /device/{deviceId}/biometrics/challenge`.
public struct BiometricChallengeResponse: Codable, Sendable, Equatable {
    public var challengeId: String
    /// 32 random bytes, base64; sign them with the biometric key.
    public var challenge: String
    /// Seconds the challenge stays valid (300).
    public var expiresIn: Int

    public init(challengeId: String, challenge: String, expiresIn: Int) {
        self.challengeId = challengeId
        self.challenge = challenge
        self.expiresIn = expiresIn
    }
}

/// The answer of `POST /device/{deviceId}/pin/verify` and `…/biometrics/verify`.
public struct DeviceFactorVerifiedResponse: Codable, Sendable, Equatable {
    public var verified: Bool
    /// `true` when this biometric verification unblocked a blocked PIN.
    public var pinUnblocked: Bool

    public init(verified: Bool = true, pinUnblocked: Bool = false) {
        self.verified = verified
        self.pinUnblocked = pinUnblocked
    }
}

/// The device's second factor: `GET /device/{deviceId}/second-factor`, and the answer of every
/// call that changes it.
public struct DeviceSecondFactorResponse: Codable, Sendable, Equatable {
    public var deviceId: String
    public var hasPin: Bool
    public var pinBlocked: Bool
    /// Wrong PINs left before the PIN is blocked (3 after a right one).
    public var pinAttemptsRemaining: Int
    public var hasBiometrics: Bool
    /// Whether a biometric verification may unblock or replace the PIN on this server.
    public var biometricsMayUnblockPin: Bool

    public init(
        deviceId: String, hasPin: Bool, pinBlocked: Bool, pinAttemptsRemaining: Int, hasBiometrics: Bool,
        biometricsMayUnblockPin: Bool
    ) {
        self.deviceId = deviceId
        self.hasPin = hasPin
        self.pinBlocked = pinBlocked
        self.pinAttemptsRemaining = pinAttemptsRemaining
        self.hasBiometrics = hasBiometrics
        self.biometricsMayUnblockPin = biometricsMayUnblockPin
    }
}
