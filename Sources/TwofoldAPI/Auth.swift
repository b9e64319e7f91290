import Foundation

/// `POST /auth/register`.
public struct RegisterRequest: Codable, Sendable {
    public var username: String
    public var email: String
    public var password: String
    public var phoneNumber: String?

    public init(username: String, email: String, password: String, phoneNumber: String? = nil) {
        self.username = username
        self.email = email
        self.password = password
        self.phoneNumber = phoneNumber
    }
}

/// A user as clients see them (never the password hash).
public struct UserDTO: Codable, Sendable, Equatable {
    public var id: UUID
    public var username: String
    public var email: String
    public var phoneNumber: String?
    public var role: String
    public var status: String
    public var createdAt: Date

    public init(
        id: UUID, username: String, email: String, phoneNumber: String?, role: String, status: String,
        createdAt: Date
    ) {
        self.id = id
        self.username = username
        self.email = email
        self.phoneNumber = phoneNumber
        self.role = role
        self.status = status
        self.createdAt = createdAt
    }
}

/// `201` answer of `POST /auth/register`.
public struct RegisterResponse: Codable, Sendable {
    public var user: UserDTO
    public init(user: UserDTO) { self.user = user }
}

/// `POST /auth/login` (seed 003): `email` or `username`, and `password`.
public struct LoginRequest: Codable, Sendable {
    public var email: String?
    public var username: String?
    public var password: String

    public init(email: String? = nil, username: String? = nil, password: String) {
        self.email = email
        self.username = username
        self.password = password
    }
}

/// A token and when it stops working (seed 003's `AccessToken` / `RefreshToken`).
public struct TokenDTO: Codable, Sendable, Equatable {
    public var token: String
    public var expiresAt: Date

    public init(token: String, expiresAt: Date) {
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// The answer of a completed sign-in: `{ accessToken, refreshToken, user }` (seed 003).
public struct AuthTokensResponse: Codable, Sendable {
    public var accessToken: TokenDTO
    public var refreshToken: TokenDTO
    public var user: UserDTO
    /// This device's token for the account (OWASP "device cookies"): send it back as
    /// `X-Device-Token` on the account's next password sign-in from this device, which then
    /// stays open while strangers guess the password elsewhere. It skips nothing.
    public var deviceToken: String?
    /// The name its owner gave the passkey that signed in, when one did (seed 000's "Signed in
    /// with <name>").
    public var passkeyName: String?

    public init(
        accessToken: TokenDTO, refreshToken: TokenDTO, user: UserDTO, deviceToken: String? = nil,
        passkeyName: String? = nil
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.user = user
        self.deviceToken = deviceToken
        self.passkeyName = passkeyName
    }
}

/// The answer of `POST /auth/login` when a second step is needed (seed 003, seed 000).
/// `otpFlowId` and `tempToken` name the same login flow.
public struct LoginChallengeResponse: Codable, Sendable {
    public var requires2FA: Bool
    public var otpFlowId: String
    public var tempToken: String
    public var availableMethods: [FactorMethod]
    public var maskedPhone: String?
    public var maskedEmail: String?
    public var expiresAt: Date
    public var serverTime: Date

    public init(
        otpFlowId: String, availableMethods: [FactorMethod], maskedPhone: String?, maskedEmail: String?,
        expiresAt: Date, serverTime: Date
    ) {
        self.requires2FA = true
        self.otpFlowId = otpFlowId
        self.tempToken = otpFlowId
        self.availableMethods = availableMethods
        self.maskedPhone = maskedPhone
        self.maskedEmail = maskedEmail
        self.expiresAt = expiresAt
        self.serverTime = serverTime
    }
}

/// `POST /auth/refresh` and `POST /auth/logout` (seed 003).
public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// The answer of `POST /auth/refresh`: a new pair; the presented refresh token stops working.
public struct RefreshResponse: Codable, Sendable {
    public var accessToken: TokenDTO
    public var refreshToken: TokenDTO

    public init(accessToken: TokenDTO, refreshToken: TokenDTO) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// `{ "success": true }`.
public struct SuccessResponse: Codable, Sendable {
    public var success: Bool
    public init(success: Bool = true) { self.success = success }
}

/// One signed-in session of a user (`GET /auth/sessions`).
public struct SessionDTO: Codable, Sendable, Equatable {
    public var id: UUID
    public var createdAt: Date
    public var lastUsedAt: Date
    public var authTime: Date
    public var methods: [String]
    public var userAgent: String?
    public var ipAddress: String?
    public var current: Bool

    public init(
        id: UUID, createdAt: Date, lastUsedAt: Date, authTime: Date, methods: [String], userAgent: String?,
        ipAddress: String?, current: Bool
    ) {
        self.id = id
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.authTime = authTime
        self.methods = methods
        self.userAgent = userAgent
        self.ipAddress = ipAddress
        self.current = current
    }
}

/// `GET /auth/sessions`.
public struct SessionsResponse: Codable, Sendable {
    public var sessions: [SessionDTO]
    public init(sessions: [SessionDTO]) { self.sessions = sessions }
}

/// `POST /auth/step-up`: prove one second factor again to raise the session's `auth_time`.
public struct StepUpRequest: Codable, Sendable {
    /// `totp`, `sms`, `email`, `backup`, `webauthn`, `deviceKey`, `push` (approved on the phone),
    /// or `password` (the password re-entered, in `password`).
    public var method: FactorMethod
    /// For `password`: the account's password.
    public var password: String?
    /// The code, for code-based methods.
    public var code: String?
    /// For `deviceKey`: the device, the challenge from `POST /auth/step-up/device-key/challenge`
    /// and the key's signature over it (ECDSA-SHA256, DER or raw, base64).
    public var deviceId: String?
    public var challengeId: String?
    public var signature: String?
    /// For `webauthn`: a passkey assertion over the challenge from
    /// `POST /auth/step-up/passkey/options`.
    public var credential: AuthenticationCredential?
    /// For `push`: the request from `POST /auth/step-up/push`, approved on the phone.
    public var requestId: String?

    public init(
        method: FactorMethod, code: String? = nil, deviceId: String? = nil, challengeId: String? = nil,
        signature: String? = nil, credential: AuthenticationCredential? = nil, password: String? = nil,
        requestId: String? = nil
    ) {
        self.method = method
        self.requestId = requestId
        self.password = password
        self.code = code
        self.deviceId = deviceId
        self.challengeId = challengeId
        self.signature = signature
        self.credential = credential
    }
}

/// The answer of `POST /auth/step-up`: a fresh access token whose `auth_time` is now.
public struct StepUpResponse: Codable, Sendable {
    public var accessToken: TokenDTO
    public init(accessToken: TokenDTO) { self.accessToken = accessToken }
}
