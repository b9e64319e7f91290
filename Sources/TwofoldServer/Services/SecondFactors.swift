import Fluent
import Foundation

/// Which second factors a user can complete a login flow with, in the order login offers them.
/// Each factor's capability adds itself here as it lands (TOTP, SMS and email codes, backup
/// codes, passkeys, device keys); with none enabled, a password alone signs in.
enum SecondFactors {
    static func available(for user: User, on database: any Database) async throws -> [String] {
        []
    }
}
