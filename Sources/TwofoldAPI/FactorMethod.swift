/// A way to prove a second factor, as the protocol names it: in a login's `availableMethods`,
/// a step-up's `method`, the primary method. Unknown names still decode (a newer server may
/// offer a method this client does not know), as `ErrorCode` does, so a client can skip them.
public struct FactorMethod: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    // Coded as the bare string, as `ErrorCode` is.

    /// An authenticator app's code (RFC 6238).
    public static let totp = FactorMethod(rawValue: "totp")
    /// A code sent by SMS to the verified phone.
    public static let sms = FactorMethod(rawValue: "sms")
    /// A code sent to the account's email address.
    public static let email = FactorMethod(rawValue: "email")
    /// One of the account's single-use backup codes.
    public static let backup = FactorMethod(rawValue: "backup")
    /// A passkey's assertion.
    public static let webauthn = FactorMethod(rawValue: "webauthn")
    /// A device key's signature over a challenge (seed 004).
    public static let deviceKey = FactorMethod(rawValue: "deviceKey")
    /// "Approve on your phone": the phone holding a device key approves the sign-in, with the
    /// number the screen shows, signed by that key (issue Z). Offered by a login, not a factor of
    /// its own: what it proves is the device key.
    public static let push = FactorMethod(rawValue: "push")
    /// The password re-entered (step-up only: it proves the first factor again).
    public static let password = FactorMethod(rawValue: "password")

    /// The second factors, in the order a login offers them when the account has them.
    public static let secondFactors: [FactorMethod] = [.webauthn, .totp, .deviceKey, .sms, .email, .backup]

    /// Methods whose proof is a code sent to a destination on file.
    public var isSentCode: Bool { self == .sms || self == .email }
}
