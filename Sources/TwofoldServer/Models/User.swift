import Foundation
import TwofoldAPI

/// A person who signs in (`users`, read and written by `UserStore`). Username and email are
/// stored in canonical (lower-case) form so that uniqueness holds regardless of how they were
/// typed.
struct User: Sendable, Equatable {
    enum Role: String, Codable, Sendable { case user, admin }
    enum Status: String, Codable, Sendable { case active, locked, disabled }

    var id: UUID
    var username: String
    var email: String
    var phone: String?
    var role: Role
    var status: Status = .active
    var passwordHash: String
    var createdAt: Date
    var updatedAt: Date
    /// SMS codes to the phone on file are enabled as a second factor.
    var smsEnabled = false
    /// Email codes to the address on file are enabled as a second factor.
    var emailEnabled = false
    /// Which factor login offers first (`totp`, `sms`, `email`, `deviceKey`); an SMS or email
    /// primary sends its code as soon as the password is accepted.
    var primaryMethod: FactorMethod?
    /// When `phone` was proven by a code sent to it; `nil` for a number only typed in (at
    /// registration). Only a verified number receives sign-in codes.
    var phoneVerifiedAt: Date?
    /// When `email` was proven by a link or a code sent to it; `nil` until then. Only a verified
    /// address receives a password-reset link, a recovery code or a security notice.
    var emailVerifiedAt: Date?
    /// The account's `SessionEpoch`: moved on by every end of every session (odd while a reset
    /// of its factors runs); a sign-in reads it with the account, before checking anything, and
    /// its session keeps it.
    var sessionEpoch = 0

    /// A new account, active, with no second factor.
    init(
        id: UUID = UUID(), username: String, email: String, phone: String?, role: Role, passwordHash: String,
        now: Date
    ) {
        self.id = id
        self.username = username
        self.email = email
        self.phone = phone
        self.role = role
        self.passwordHash = passwordHash
        self.createdAt = now
        self.updatedAt = now
    }

    /// Where SMS or email codes go: the verified phone number or the address on file.
    func destination(for channel: DeliveryChannel) -> String? {
        channel == .sms ? verifiedPhone : email
    }

    /// The phone number on file once a code sent to it was entered; `nil` before.
    var verifiedPhone: String? { phoneVerifiedAt == nil ? nil : phone }

    /// The address on file once a link or code sent to it was used; `nil` before.
    var verifiedEmail: String? { emailVerifiedAt == nil ? nil : email }

    /// An administrator whose account is active: the one test for admin rights.
    var isActiveAdmin: Bool { role == .admin && status == .active }

    var dto: UserDTO {
        UserDTO(
            id: id, username: username, email: email, phoneNumber: phone, role: role.rawValue,
            status: status.rawValue, createdAt: createdAt)
    }
}
