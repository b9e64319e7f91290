import Fluent
import Foundation
import TwofoldAPI

/// A person who signs in. Username and email are stored in canonical (lower-case) form so that
/// uniqueness holds regardless of how they were typed.
final class User: Model, @unchecked Sendable {
    // @unchecked: Fluent models are classes with property wrappers; each instance is used by one
    // request at a time and never shared across tasks.
    static let schema = "users"

    enum Role: String, Codable, Sendable { case user, admin }
    enum Status: String, Codable, Sendable { case active, locked, disabled }

    @ID(key: .id) var id: UUID?
    @Field(key: "username") var username: String
    @Field(key: "email") var email: String
    @OptionalField(key: "phone") var phone: String?
    @Field(key: "role") var role: Role
    @Field(key: "status") var status: Status
    @Field(key: "password_hash") var passwordHash: String
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date
    /// SMS codes to the phone on file are enabled as a second factor.
    @Field(key: "sms_enabled") var smsEnabled: Bool
    /// Email codes to the address on file are enabled as a second factor.
    @Field(key: "email_enabled") var emailEnabled: Bool
    /// Which factor login offers first (`totp`, `sms`, `email`); an SMS or email primary sends
    /// its code as soon as the password is accepted.
    @OptionalField(key: "primary_method") var primaryMethod: String?
    /// When `phone` was proven by a code sent to it; `nil` for a number only typed in (at
    /// registration). Only a verified number receives sign-in codes.
    @OptionalField(key: "phone_verified_at") var phoneVerifiedAt: Date?

    init() {}

    init(
        id: UUID? = nil, username: String, email: String, phone: String?, role: Role, passwordHash: String,
        now: Date
    ) {
        self.id = id
        self.username = username
        self.email = email
        self.phone = phone
        self.role = role
        self.status = .active
        self.passwordHash = passwordHash
        self.createdAt = now
        self.updatedAt = now
        self.smsEnabled = false
        self.emailEnabled = false
    }

    /// Where SMS or email codes go: the verified phone number or the address on file.
    func destination(for channel: OutboxMessage.Channel) -> String? {
        channel == .sms ? verifiedPhone : email
    }

    /// The phone number on file once a code sent to it was entered; `nil` before.
    var verifiedPhone: String? { phoneVerifiedAt == nil ? nil : phone }

    /// The user whose (canonical, lower-case) email address or username is `identifier`.
    static func find(identifier: String, on database: any Database) async throws -> User? {
        try await User.query(on: database).group(.or) {
            $0.filter(\.$email == identifier).filter(\.$username == identifier)
        }.first()
    }

    /// An administrator whose account is active: the one test for admin rights.
    var isActiveAdmin: Bool { role == .admin && status == .active }

    var dto: UserDTO {
        UserDTO(
            id: id!, username: username, email: email, phoneNumber: phone, role: role.rawValue,
            status: status.rawValue, createdAt: createdAt)
    }
}
