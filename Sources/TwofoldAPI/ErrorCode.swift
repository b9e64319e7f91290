/// The stable, machine-readable `code` of a problem document. Clients branch on these, never on
/// `title` or `detail`, so a code once published never changes meaning.
public struct ErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    // Coded as the bare string: the standard library's `Codable` for `RawRepresentable<String>`.

    public static let validationFailed = ErrorCode(rawValue: "validation_failed")
    public static let malformedRequest = ErrorCode(rawValue: "malformed_request")
    public static let payloadTooLarge = ErrorCode(rawValue: "payload_too_large")
    public static let unsupportedMediaType = ErrorCode(rawValue: "unsupported_media_type")
    public static let invalidCredentials = ErrorCode(rawValue: "invalid_credentials")
    public static let invalidCode = ErrorCode(rawValue: "invalid_code")
    public static let expired = ErrorCode(rawValue: "expired")
    public static let alreadyUsed = ErrorCode(rawValue: "already_used")
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    public static let locked = ErrorCode(rawValue: "locked")
    public static let accountLocked = ErrorCode(rawValue: "account_locked")
    public static let mfaRequired = ErrorCode(rawValue: "mfa_required")
    public static let stepUpRequired = ErrorCode(rawValue: "step_up_required")
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    public static let notFound = ErrorCode(rawValue: "not_found")
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")
    public static let conflict = ErrorCode(rawValue: "conflict")
    public static let deviceInsecure = ErrorCode(rawValue: "device_insecure")
    /// A device PIN blocked after 3 wrong entries in a row (seed 001).
    public static let pinBlocked = ErrorCode(rawValue: "pin_blocked")
    public static let signatureInvalid = ErrorCode(rawValue: "signature_invalid")
    public static let counterRegression = ErrorCode(rawValue: "counter_regression")
    /// A passkey ceremony refused: `errors.credential` holds the stable reason
    /// (`origin_not_allowed`, `user_not_verified`, `unknown_credential`, …), `detail` a sentence.
    public static let webauthnRefused = ErrorCode(rawValue: "webauthn_refused")
    /// A session a recovery pass began, before the account has a second factor again: it may
    /// only set one up (`API.Recovery.beforeFactorSetup`).
    public static let factorSetupRequired = ErrorCode(rawValue: "factor_setup_required")
    /// A recovery pass inside its waiting period: `retryAfter` says when it works.
    public static let notYetValid = ErrorCode(rawValue: "not_yet_valid")
    public static let serviceUnavailable = ErrorCode(rawValue: "service_unavailable")
    public static let internalError = ErrorCode(rawValue: "internal_error")
}
