import Foundation

/// `PUT /account/password`: the current password proves it is the owner; every other session
/// and every remembered device is revoked when it changes, and the user is told (by email and
/// SMS) which device keys can still sign in.
public struct PasswordChangeRequest: Codable, Sendable {
    public var currentPassword: String
    public var newPassword: String
    /// Also removes every enrolled device of the account, device keys and SMS sign-in alike
    /// (each signs in without the password).
    public var removeDeviceKeys: Bool?
    /// Also removes every passkey of the account (each signs in without the password).
    public var removePasskeys: Bool?

    public init(
        currentPassword: String, newPassword: String, removeDeviceKeys: Bool? = nil, removePasskeys: Bool? = nil
    ) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
        self.removeDeviceKeys = removeDeviceKeys
        self.removePasskeys = removePasskeys
    }
}

/// `PUT /account/phone`: without `code`, sends a code to `phoneNumber` (`202`); with the code
/// that arrived there, makes it the number on file.
public struct PhoneChangeRequest: Codable, Sendable {
    public var phoneNumber: String
    public var code: String?

    public init(phoneNumber: String, code: String? = nil) {
        self.phoneNumber = phoneNumber
        self.code = code
    }
}

/// `PUT /account/email`: without `code`, sends a code to `email` (`202`); with the code that
/// arrived there, makes it the address on file.
public struct EmailChangeRequest: Codable, Sendable {
    public var email: String
    public var code: String?

    public init(email: String, code: String? = nil) {
        self.email = email
        self.code = code
    }
}

/// `POST /auth/step-up/send`: send an SMS or email code to prove a second factor again.
public struct StepUpSendRequest: Codable, Sendable {
    /// `sms` or `email`.
    public var method: FactorMethod
    public init(method: FactorMethod) { self.method = method }
}
