import Foundation

/// `POST /auth/password/forgot`: the address of the account whose password is forgotten.
/// Answered alike whether or not an account has that address (and whether or not it is
/// verified): only the mailbox learns which.
public struct PasswordForgotRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// `202` answer of `POST /auth/password/forgot`: the same words for every address.
public struct PasswordForgotResponse: Codable, Sendable, Equatable {
    public var accepted: Bool
    /// How long a link works once it arrives.
    public var linkLifetimeSeconds: Int
    public var message: String

    public init(linkLifetimeSeconds: Int, message: String) {
        self.accepted = true
        self.linkLifetimeSeconds = linkLifetimeSeconds
        self.message = message
    }
}

/// `POST /auth/password/reset/options`: the token of a reset link, to learn what else the
/// reset needs before the person types a new password.
public struct PasswordResetOptionsRequest: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// What a reset link needs besides a new password: one of the account's second factors when it
/// has any (the emailed link proves the mailbox only).
public struct PasswordResetOptions: Codable, Sendable, Equatable {
    /// Whether a second factor must be proven with the new password.
    public var secondFactorRequired: Bool
    /// The account's second factors that may prove it, most preferred first (email codes never:
    /// the link already proves the mailbox).
    public var availableMethods: [FactorMethod]
    /// Where an SMS code for the reset goes, masked, when `sms` is available.
    public var maskedPhone: String?
    /// The account's devices with a key, when `deviceKey` is available.
    public var deviceIds: [String]?
    public var expiresAt: Date

    public init(
        secondFactorRequired: Bool, availableMethods: [FactorMethod], maskedPhone: String? = nil,
        deviceIds: [String]? = nil, expiresAt: Date
    ) {
        self.secondFactorRequired = secondFactorRequired
        self.availableMethods = availableMethods
        self.maskedPhone = maskedPhone
        self.deviceIds = deviceIds
        self.expiresAt = expiresAt
    }
}

/// `POST /auth/password/reset/send`: an SMS code for the reset, to the verified phone.
public struct PasswordResetSendRequest: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// `POST /auth/password/reset/device-key/challenge`: a challenge for `deviceId`'s key.
public struct PasswordResetChallengeRequest: Codable, Sendable {
    public var token: String
    public var deviceId: String
    public init(token: String, deviceId: String) {
        self.token = token
        self.deviceId = deviceId
    }
}

/// `POST /auth/password/reset`: the link's token, the new password, and — on an account with a
/// second factor — one of them, in the fields `POST /auth/step-up` uses (`method` and `code`,
/// a device key's signature, or a passkey assertion over `…/reset/passkey/options`).
public struct PasswordResetRequest: Codable, Sendable {
    public var token: String
    public var newPassword: String
    public var method: FactorMethod?
    public var code: String?
    public var deviceId: String?
    public var challengeId: String?
    public var signature: String?
    public var credential: AuthenticationCredential?

    public init(
        token: String, newPassword: String, method: FactorMethod? = nil, code: String? = nil,
        deviceId: String? = nil, challengeId: String? = nil, signature: String? = nil,
        credential: AuthenticationCredential? = nil
    ) {
        self.token = token
        self.newPassword = newPassword
        self.method = method
        self.code = code
        self.deviceId = deviceId
        self.challengeId = challengeId
        self.signature = signature
        self.credential = credential
    }
}

/// `POST /account/email/verify`: the token of the link sent when the account was made (or
/// sent again from the account's security page).
public struct EmailVerifyRequest: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// Whether the account's address is verified, and when.
public struct EmailVerificationStatus: Codable, Sendable, Equatable {
    public var email: String
    public var verified: Bool
    public var verifiedAt: Date?

    public init(email: String, verifiedAt: Date?) {
        self.email = email
        self.verified = verifiedAt != nil
        self.verifiedAt = verifiedAt
    }
}
