import Foundation

/// `POST /2fa/totp/setup` (seed 000).
public struct TOTPSetupResponse: Codable, Sendable {
    /// The Base32 secret, for typing into an app by hand.
    public var secret: String
    public var otpauthUri: String
    /// The QR code of `otpauthUri` as an SVG document.
    public var qrCodeSvg: String
    /// When the pending secret is discarded if no code confirms it.
    public var expiresAt: Date
    /// The server's clock, so an app can warn when the device is more than 30 s off.
    public var serverTime: Date

    public init(secret: String, otpauthUri: String, qrCodeSvg: String, expiresAt: Date, serverTime: Date) {
        self.secret = secret
        self.otpauthUri = otpauthUri
        self.qrCodeSvg = qrCodeSvg
        self.expiresAt = expiresAt
        self.serverTime = serverTime
    }
}

/// `{ "code": "123456" }`.
public struct CodeRequest: Codable, Sendable {
    public var code: String
    public init(code: String) { self.code = code }
}

/// `POST /2fa/totp/verify`: enabled, with the backup codes when this is the first factor
/// (shown once).
public struct FactorEnabledResponse: Codable, Sendable {
    public var enabled: Bool
    public var backupCodes: [String]?
    public var serverTime: Date

    public init(backupCodes: [String]?, serverTime: Date) {
        self.enabled = true
        self.backupCodes = backupCodes
        self.serverTime = serverTime
    }
}

/// `POST /2fa/totp/validate` (seed 000): the second step of a login flow with a TOTP code.
public struct TOTPValidateRequest: Codable, Sendable {
    public var tempToken: String
    public var code: String
    /// Remember this device for 30 days (seed 002).
    public var trustDevice: Bool?

    public init(tempToken: String, code: String, trustDevice: Bool? = nil) {
        self.tempToken = tempToken
        self.code = code
        self.trustDevice = trustDevice
    }
}

/// `POST /auth/backup-codes/verify` and `POST /2fa/backup-codes/verify` (seeds 003, 000).
public struct BackupCodeVerifyRequest: Codable, Sendable {
    public var otpFlowId: String?
    public var tempToken: String?
    public var backupCode: String
    public var trustDevice: Bool?

    public init(otpFlowId: String? = nil, tempToken: String? = nil, backupCode: String, trustDevice: Bool? = nil) {
        self.otpFlowId = otpFlowId
        self.tempToken = tempToken
        self.backupCode = backupCode
        self.trustDevice = trustDevice
    }
}

/// `POST /auth/mfa/verify-login` (seed 002): `code`, `method` (`totp` by default, or `backup`),
/// and the login flow as `otpFlowId`/`tempToken` or as the bearer token.
public struct MFAVerifyLoginRequest: Codable, Sendable {
    /// The code, for every method but `deviceKey`.
    public var code: String?
    public var method: FactorMethod?
    public var otpFlowId: String?
    public var tempToken: String?
    /// Seed 002 spells it `trust_device`.
    public var trustDevice: Bool?
    /// For `deviceKey`: the device, the challenge from `POST /auth/mfa/device-key/challenge` and
    /// the key's signature over it (ECDSA-SHA256, DER or raw, base64).
    public var deviceId: String?
    public var challengeId: String?
    public var signature: String?

    enum CodingKeys: String, CodingKey {
        case code, method, otpFlowId, tempToken, deviceId, challengeId, signature
        case trustDevice = "trust_device"
    }

    public init(
        code: String? = nil, method: FactorMethod? = nil, otpFlowId: String? = nil, tempToken: String? = nil,
        trustDevice: Bool? = nil, deviceId: String? = nil, challengeId: String? = nil, signature: String? = nil
    ) {
        self.code = code
        self.method = method
        self.otpFlowId = otpFlowId
        self.tempToken = tempToken
        self.trustDevice = trustDevice
        self.deviceId = deviceId
        self.challengeId = challengeId
        self.signature = signature
    }
}

/// A login completed by a second step: the tokens, and for backup codes how many are left.
public struct SecondStepResponse: Codable, Sendable {
    public var accessToken: TokenDTO
    public var refreshToken: TokenDTO
    public var user: UserDTO
    public var backupCodesRemaining: Int?
    /// `true` when 3 or fewer backup codes are left: prompt the user to regenerate.
    public var backupCodesLow: Bool?
    /// Send back as `X-Trusted-Device` (or the cookie) to skip the second step for 30 days.
    public var trustedDeviceToken: String?
    /// As `AuthTokensResponse.deviceToken`.
    public var deviceToken: String?
    /// As `AuthTokensResponse.passkeyName`: the passkey that finished the sign-in, by its name.
    public var passkeyName: String?
    public var serverTime: Date

    /// The tokens as a completed sign-in's.
    public var tokens: AuthTokensResponse {
        AuthTokensResponse(
            accessToken: accessToken, refreshToken: refreshToken, user: user, deviceToken: deviceToken,
            passkeyName: passkeyName)
    }

    public init(
        tokens: AuthTokensResponse, backupCodesRemaining: Int?, backupCodesLow: Bool?, trustedDeviceToken: String?,
        serverTime: Date
    ) {
        self.accessToken = tokens.accessToken
        self.refreshToken = tokens.refreshToken
        self.user = tokens.user
        self.deviceToken = tokens.deviceToken
        self.passkeyName = tokens.passkeyName
        self.backupCodesRemaining = backupCodesRemaining
        self.backupCodesLow = backupCodesLow
        self.trustedDeviceToken = trustedDeviceToken
        self.serverTime = serverTime
    }
}

/// `POST /2fa/backup-codes/regenerate`.
public struct BackupCodesResponse: Codable, Sendable {
    public var backupCodes: [String]
    public init(backupCodes: [String]) { self.backupCodes = backupCodes }
}

/// `GET /2fa/status` (seed 000's `TwoFAState`, extended per API.md).
public struct TwoFactorStatus: Codable, Sendable {
    public struct TOTP: Codable, Sendable {
        public var enabled: Bool
        public var configuredAt: Date?

        /// `configuredAt` is written as `null` when unset, as seed 000's `TwoFAState` has it.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(configuredAt, forKey: .configuredAt)
        }
    }

    public struct BackupCodeStatus: Codable, Sendable {
        public var remaining: Int
        public var generatedAt: Date?
        /// Whether so few are left that the person should make new ones (the server's
        /// `TWOFOLD_BACKUP_CODES_WARN_AT`, 3 by default, as a sign-in's `backupCodesLow`).
        public var low: Bool?

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(remaining, forKey: .remaining)
            try container.encode(generatedAt, forKey: .generatedAt)
            try container.encodeIfPresent(low, forKey: .low)
        }
    }

    /// The account's passkeys (seed 000's `webauthn: { enabled, credentials }`).
    public struct WebAuthn: Codable, Sendable {
        public var enabled: Bool
        public var credentials: [PasskeyDTO]
    }

    public var isEnabled: Bool
    public var primaryMethod: FactorMethod?
    public var totp: TOTP
    public struct TrustedDevices: Codable, Sendable {
        public var count: Int
    }

    /// SMS or email codes: enabled, and where they go (masked).
    public struct CodeChannel: Codable, Sendable {
        public var enabled: Bool
        public var maskedDestination: String?

        public init(enabled: Bool, maskedDestination: String?) {
            self.enabled = enabled
            self.maskedDestination = maskedDestination
        }
    }

    public var webauthn: WebAuthn
    public var backupCodes: BackupCodeStatus
    public var trustedDevices: TrustedDevices
    public var sms: CodeChannel
    public var email: CodeChannel
    public var serverTime: Date

    public init(
        methods: [FactorMethod], totpConfiguredAt: Date?, passkeys: [PasskeyDTO] = [], sms: CodeChannel,
        email: CodeChannel,
        backupCodesRemaining: Int,
        backupCodesGeneratedAt: Date?, backupCodesLow: Bool? = nil, trustedDeviceCount: Int, serverTime: Date
    ) {
        let totpEnabled = totpConfiguredAt != nil
        self.isEnabled = !methods.filter { $0 != .backup }.isEmpty
        self.primaryMethod = methods.first { $0 != .backup }
        self.sms = sms
        self.email = email
        self.totp = TOTP(enabled: totpEnabled, configuredAt: totpConfiguredAt)
        self.webauthn = WebAuthn(enabled: !passkeys.isEmpty, credentials: passkeys)
        self.backupCodes = BackupCodeStatus(
            remaining: backupCodesRemaining, generatedAt: backupCodesGeneratedAt, low: backupCodesLow)
        self.trustedDevices = TrustedDevices(count: trustedDeviceCount)
        self.serverTime = serverTime
    }

    enum CodingKeys: String, CodingKey {
        case isEnabled, primaryMethod, totp, webauthn, backupCodes, trustedDevices, sms, email, serverTime
    }

    /// `primaryMethod` is written as `null` when there is none (seed 000).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(isEnabled, forKey: .isEnabled)
        try container.encode(primaryMethod, forKey: .primaryMethod)
        try container.encode(totp, forKey: .totp)
        try container.encode(webauthn, forKey: .webauthn)
        try container.encode(backupCodes, forKey: .backupCodes)
        try container.encode(trustedDevices, forKey: .trustedDevices)
        try container.encode(sms, forKey: .sms)
        try container.encode(email, forKey: .email)
        try container.encode(serverTime, forKey: .serverTime)
    }
}

/// `GET /auth/mfa/status` (seed 002): the flat form.
public struct MFAStatus: Codable, Sendable {
    public var enabled: Bool
    public var methods: [FactorMethod]
    public var backupCodesRemaining: Int
    public var trustedDeviceCount: Int
    public var serverTime: Date

    public init(
        enabled: Bool, methods: [FactorMethod], backupCodesRemaining: Int, trustedDeviceCount: Int, serverTime: Date
    ) {
        self.enabled = enabled
        self.methods = methods
        self.backupCodesRemaining = backupCodesRemaining
        self.trustedDeviceCount = trustedDeviceCount
        self.serverTime = serverTime
    }
}

/// A remembered device (`GET /auth/mfa/trusted-devices`, seed 002).
public struct TrustedDeviceDTO: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var expiresAt: Date

    public init(id: UUID, name: String, createdAt: Date, lastUsedAt: Date?, expiresAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
    }
}

/// `GET /auth/mfa/trusted-devices`.
public struct TrustedDevicesResponse: Codable, Sendable {
    public var devices: [TrustedDeviceDTO]
    public init(devices: [TrustedDeviceDTO]) { self.devices = devices }
}

/// `POST /auth/otp/verify` (seed 003).
public struct OTPVerifyRequest: Codable, Sendable {
    public var otpFlowId: String
    public var code: String
    public var trustDevice: Bool?

    public init(otpFlowId: String, code: String, trustDevice: Bool? = nil) {
        self.otpFlowId = otpFlowId
        self.code = code
        self.trustDevice = trustDevice
    }
}

/// `POST /auth/otp/resend` (seed 003): `method` is `sms` or `email`.
public struct OTPResendRequest: Codable, Sendable {
    public var otpFlowId: String
    public var method: FactorMethod?

    public init(otpFlowId: String, method: FactorMethod? = nil) {
        self.otpFlowId = otpFlowId
        self.method = method
    }
}

/// A code was sent: when the next may be asked for, and where it went (masked).
public struct CodeSentResponse: Codable, Sendable {
    public var success: Bool
    public var nextAllowedAt: Date
    public var maskedDestination: String
    public var expiresAt: Date

    public init(nextAllowedAt: Date, maskedDestination: String, expiresAt: Date) {
        self.success = true
        self.nextAllowedAt = nextAllowedAt
        self.maskedDestination = maskedDestination
        self.expiresAt = expiresAt
    }
}

/// `POST /2fa/sms/setup`: optionally a new number, which becomes the one on file once verified.
public struct SMSSetupRequest: Codable, Sendable {
    public var phoneNumber: String?
    public init(phoneNumber: String? = nil) { self.phoneNumber = phoneNumber }
}

/// `PUT /2fa/primary-method`.
public struct PrimaryMethodRequest: Codable, Sendable {
    public var method: FactorMethod
    public init(method: FactorMethod) { self.method = method }
}
