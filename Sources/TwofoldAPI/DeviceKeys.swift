import Foundation

// Seed 004's device-bound keys: request and response bodies exactly as the seed shows them, so
// an app written to the seed works unchanged. Optional fields the seed does not show are left out
// of the JSON when absent.

/// `POST /mfa/enroll`.
public struct DeviceEnrollRequest: Codable, Sendable, Equatable {
    public var username: String
    public var phoneNumber: String?
    /// base64 of the uncompressed X9.63 P-256 point; required for `secureEnclave`.
    public var publicKey: String?
    /// `secureEnclave` or `smsOTP`.
    public var method: String
    public var deviceId: String
    public var deviceModel: String?
    /// Seed 001: the device's PIN, set at enrolment (4 to 16 digits, not common); not in seed 004.
    public var pin: String?

    public init(
        username: String, phoneNumber: String? = nil, publicKey: String? = nil, method: String, deviceId: String,
        deviceModel: String? = nil, pin: String? = nil
    ) {
        self.username = username
        self.phoneNumber = phoneNumber
        self.publicKey = publicKey
        self.method = method
        self.deviceId = deviceId
        self.deviceModel = deviceModel
        self.pin = pin
    }
}

/// The answer of `POST /mfa/enroll`.
public struct DeviceEnrollResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var deviceId: String
    public var method: String
    public var message: String

    public init(success: Bool = true, deviceId: String, method: String, message: String) {
        self.success = success
        self.deviceId = deviceId
        self.method = method
        self.message = message
    }
}

/// `POST /mfa/unenroll`, `POST /mfa/downgrade`, `POST /auth/initiate`: a user's device.
public struct DeviceRequest: Codable, Sendable, Equatable {
    public var username: String
    public var deviceId: String

    public init(username: String, deviceId: String) {
        self.username = username
        self.deviceId = deviceId
    }
}

/// `POST /mfa/upgrade`: a new key for the device (SMS → key, or a new key replacing the old).
public struct DeviceUpgradeRequest: Codable, Sendable, Equatable {
    public var username: String
    public var deviceId: String
    public var publicKey: String

    public init(username: String, deviceId: String, publicKey: String) {
        self.username = username
        self.deviceId = deviceId
        self.publicKey = publicKey
    }
}

/// `{ success, message }` (`POST /mfa/unenroll`).
public struct DeviceMessageResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var message: String

    public init(success: Bool = true, message: String) {
        self.success = success
        self.message = message
    }
}

/// `{ success, method, message }` (`POST /mfa/upgrade`, `POST /mfa/downgrade`).
public struct DeviceMethodResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var method: String
    public var message: String

    public init(success: Bool = true, method: String, message: String) {
        self.success = success
        self.method = method
        self.message = message
    }
}

/// The answer of `POST /auth/initiate`: the challenge to sign (32 random bytes, base64).
public struct DeviceChallengeResponse: Codable, Sendable, Equatable {
    public var method: String
    public var challenge: String
    public var challengeId: String
    /// Seconds the challenge stays valid (300).
    public var expiresIn: Int

    public init(method: String, challenge: String, challengeId: String, expiresIn: Int) {
        self.method = method
        self.challenge = challenge
        self.challengeId = challengeId
        self.expiresIn = expiresIn
    }
}

/// `POST /auth/mfa/device-key/challenge` (with the login flow's `otpFlowId` or `tempToken`) and
/// `POST /auth/step-up/device-key/challenge` (bearer): a challenge for the device key as a second
/// factor. Not in seed 004; the answer is `DeviceChallengeResponse`.
/// `POST /auth/step-up/device-key/challenge`: the signed-in user's device.
public struct StepUpDeviceKeyChallengeRequest: Codable, Sendable, Equatable {
    public var deviceId: String

    public init(deviceId: String) { self.deviceId = deviceId }
}

public struct DeviceKeyChallengeRequest: Codable, Sendable, Equatable {
    public var deviceId: String
    public var otpFlowId: String?
    public var tempToken: String?

    public init(deviceId: String, otpFlowId: String? = nil, tempToken: String? = nil) {
        self.deviceId = deviceId
        self.otpFlowId = otpFlowId
        self.tempToken = tempToken
    }
}

/// `POST /auth/verify-signature`: the challenge signed with the device key (ECDSA-SHA256, DER
/// or raw 64 bytes, base64).
public struct VerifySignatureRequest: Codable, Sendable, Equatable {
    public var username: String
    public var deviceId: String
    public var challengeId: String
    public var signature: String

    public init(username: String, deviceId: String, challengeId: String, signature: String) {
        self.username = username
        self.deviceId = deviceId
        self.challengeId = challengeId
        self.signature = signature
    }
}

/// `POST /auth/request-otp`.
public struct RequestOTPRequest: Codable, Sendable, Equatable {
    public var username: String
    public var phoneNumber: String?

    public init(username: String, phoneNumber: String? = nil) {
        self.username = username
        self.phoneNumber = phoneNumber
    }
}

/// The answer of `POST /auth/request-otp`; the same whether or not the user exists.
public struct RequestOTPResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var message: String
    public var expiresIn: Int

    public init(success: Bool = true, message: String, expiresIn: Int) {
        self.success = success
        self.message = message
        self.expiresIn = expiresIn
    }
}

/// `POST /auth/verify-otp` (seed 004).
public struct DeviceVerifyOTPRequest: Codable, Sendable, Equatable {
    public var username: String
    public var otp: String

    public init(username: String, otp: String) {
        self.username = username
        self.otp = otp
    }
}

/// The answer of `POST /auth/verify-signature` and `POST /auth/verify-otp`: `token` is a Twofold
/// access token; `refreshToken` and `expiresAt` come alongside (not in the seed; ignored by an
/// app that does not know them).
public struct DeviceTokenResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var token: String
    public var message: String
    public var refreshToken: String?
    public var expiresAt: Date?

    public init(
        success: Bool = true, token: String, message: String, refreshToken: String? = nil, expiresAt: Date? = nil
    ) {
        self.success = success
        self.token = token
        self.message = message
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }
}

/// One entry of `GET /devices/{username}`.
public struct DeviceDTO: Codable, Sendable, Equatable {
    public var deviceId: String
    public var deviceModel: String?
    public var method: String
    public var enrolledAt: Date
    public var lastUsed: Date?

    public init(deviceId: String, deviceModel: String?, method: String, enrolledAt: Date, lastUsed: Date?) {
        self.deviceId = deviceId
        self.deviceModel = deviceModel
        self.method = method
        self.enrolledAt = enrolledAt
        self.lastUsed = lastUsed
    }
}

/// `GET /devices/{username}`.
public struct DeviceListResponse: Codable, Sendable, Equatable {
    public var devices: [DeviceDTO]
    public init(devices: [DeviceDTO]) { self.devices = devices }
}

/// `GET /device/{deviceId}/status`. `phoneNumber` is masked (the seed showed it whole).
public struct DeviceStatusResponse: Codable, Sendable, Equatable {
    public var deviceId: String
    public var enrolled: Bool
    public var method: String
    public var hasPublicKey: Bool
    public var phoneNumber: String?

    public init(deviceId: String, enrolled: Bool, method: String, hasPublicKey: Bool, phoneNumber: String?) {
        self.deviceId = deviceId
        self.enrolled = enrolled
        self.method = method
        self.hasPublicKey = hasPublicKey
        self.phoneNumber = phoneNumber
    }
}
