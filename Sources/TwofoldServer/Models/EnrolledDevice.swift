import Fluent
import Foundation
import TwofoldAPI

/// A phone enrolled for seed 004's device-bound sign-in: a Secure Enclave P-256 key
/// (`secureEnclave`) or SMS codes to the account's phone (`smsOTP`). Seed 001's device second
/// factor lives here too: a PIN (a slow salted hash; blocked after 3 wrong in a row) and a
/// biometric-protected key.
final class EnrolledDevice: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "devices"

    enum Method: String, Codable, Sendable {
        case secureEnclave
        case smsOTP
    }

    @ID(key: .id) var id: UUID?
    @Field(key: "user_id") var userID: UUID
    /// The app's own identifier for the device (seed 004's `deviceId`), unique per user.
    @Field(key: "device_id") var deviceID: String
    @OptionalField(key: "device_model") var deviceModel: String?
    @Field(key: "method") var method: Method
    /// base64 of the uncompressed X9.63 point; `nil` for an SMS device.
    @OptionalField(key: "public_key") var publicKey: String?
    @Field(key: "enrolled_at") var enrolledAt: Date
    @Field(key: "updated_at") var updatedAt: Date
    @OptionalField(key: "last_used_at") var lastUsedAt: Date?
    /// Seed 001: the device PIN as a bcrypt hash, its wrong-in-a-row count, and whether it is blocked.
    @OptionalField(key: "pin_hash") var pinHash: String?
    @Field(key: "pin_failures") var pinFailures: Int
    @Field(key: "pin_blocked") var pinBlocked: Bool
    /// Seed 001: the biometric-protected key (base64 X9.63), dropped when the device reports its
    /// biometric set changed.
    @OptionalField(key: "biometric_key") var biometricKey: String?

    init() {}

    init(userID: UUID, deviceID: String, deviceModel: String?, method: Method, publicKey: String?, now: Date) {
        self.userID = userID
        self.deviceID = deviceID
        self.deviceModel = deviceModel
        self.method = method
        self.publicKey = publicKey
        self.enrolledAt = now
        self.updatedAt = now
        self.pinFailures = 0
        self.pinBlocked = false
    }

    /// `user`'s device with the app's identifier `deviceID`.
    static func find(_ deviceID: String, of user: User, on database: any Database) async throws -> EnrolledDevice? {
        try await query(on: database).filter(\.$userID == user.requireID()).filter(\.$deviceID == deviceID).first()
    }

    var dto: DeviceDTO {
        DeviceDTO(
            deviceId: deviceID, deviceModel: deviceModel, method: method.rawValue, enrolledAt: enrolledAt,
            lastUsed: lastUsedAt)
    }
}

/// A challenge for a device key (seed 004): 32 random bytes, 5 minutes, used once. `purpose`
/// says what a good signature proves: a sign-in, the second step of a login flow, a step-up, or
/// (seed 001) the biometric key.
final class DeviceChallenge: Model, @unchecked Sendable {
    // @unchecked: see `User`.
    static let schema = "device_challenges"

    enum Purpose: String, Codable, Sendable {
        case signIn = "sign_in"
        case loginFlow = "login_flow"
        case stepUp = "step_up"
        case biometric
    }

    @ID(key: .id) var id: UUID?
    @Field(key: "device_id") var deviceID: UUID
    @Field(key: "user_id") var userID: UUID
    @Field(key: "purpose") var purpose: Purpose
    @OptionalField(key: "flow_id") var flowID: UUID?
    /// base64 of the 32 bytes to sign.
    @Field(key: "challenge") var challenge: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "used_at") var usedAt: Date?

    init() {}

    init(deviceID: UUID, userID: UUID, purpose: Purpose, flowID: UUID?, challenge: String, now: Date, expiresAt: Date) {
        self.id = UUID()
        self.deviceID = deviceID
        self.userID = userID
        self.purpose = purpose
        self.flowID = flowID
        self.challenge = challenge
        self.createdAt = now
        self.expiresAt = expiresAt
    }
}
