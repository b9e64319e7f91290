import Foundation

/// An RFC 9457 problem document, the body of every error answer
/// (`Content-Type: application/problem+json`).
public struct Problem: Codable, Equatable, Sendable, Error {
    /// The media type of a problem document.
    public static let mediaType = "application/problem+json"

    /// A URI naming the kind of problem; `https://twofold.dev/problems/<code>`.
    public var type: String
    /// A short summary that does not change between occurrences.
    public var title: String
    /// The HTTP status code.
    public var status: Int
    /// What went wrong this time, for a human.
    public var detail: String?
    /// The stable machine-readable code.
    public var code: ErrorCode
    /// Wrong attempts left before a lockout.
    public var attemptsRemaining: Int?
    /// Seconds until the request may be retried; also sent as `Retry-After`.
    public var retryAfter: Int?
    /// When a lockout ends.
    public var lockoutUntil: Date?
    /// Per-field messages of a validation failure, keyed by field name.
    public var errors: [String: String]?

    public init(
        status: Int,
        code: ErrorCode,
        title: String,
        detail: String? = nil,
        attemptsRemaining: Int? = nil,
        retryAfter: Int? = nil,
        lockoutUntil: Date? = nil,
        errors: [String: String]? = nil
    ) {
        self.type = "https://twofold.dev/problems/\(code.rawValue)"
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.attemptsRemaining = attemptsRemaining
        self.retryAfter = retryAfter
        self.lockoutUntil = lockoutUntil
        self.errors = errors
    }
}
