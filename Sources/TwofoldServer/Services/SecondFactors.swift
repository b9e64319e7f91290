import Fluent
import Foundation
import Vapor

/// Which second factors a user can complete a login flow with, in the order login offers them.
/// Each factor's capability adds itself here as it lands (TOTP, SMS and email codes, backup
/// codes, passkeys, device keys); with none enabled, a password alone signs in.
enum SecondFactors {
    static func available(for user: User, on database: any Database) async throws -> [String] {
        []
    }
}

extension SecondFactors {
    /// The outcome of checking one second factor.
    enum Verification {
        /// Proven; the RFC 8176 method reference to record (`otp`, `sms`, `hwk`, …).
        case verified(amr: String)
        /// The user has no such factor enabled.
        case notEnabled
    }

    /// Checks one second factor of `user` (step-up, and the second step of a login flow). Each
    /// factor's capability adds its check here as it lands; a method the user has not enabled is
    /// `.notEnabled`, and a wrong code throws the factor's problem (`invalid_code`, `locked`).
    static func verify(method: String, code: String?, for user: User, request: Request) async throws -> Verification {
        .notEnabled
    }
}
