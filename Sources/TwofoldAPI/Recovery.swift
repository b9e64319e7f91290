import Foundation

/// Where an account-recovery request stands (`GET /2fa/recovery/{id}`).
public enum RecoveryState: String, Codable, Sendable, CaseIterable {
    /// Waiting for the code sent to the account's email address.
    case pendingEmail = "pending_email"
    /// The email was proven; an administrator reviews the request.
    case pendingReview = "pending_review"
    /// Approved: a single-use pass went to the account's email address.
    case approved
    case denied
    /// The pass was used: the person is back in and sets up a factor.
    case completed
    /// Cancelled from a "this wasn't me" link.
    case cancelled
    /// Its code, its review or its pass ran out of time.
    case expired
}

/// A file that helps a reviewer decide (a photo of an ID document): its type and its bytes in
/// base64. JPEG, PNG and PDF only, checked by their first bytes, at most
/// `RecoveryDocument.maximumBytes` (decoded).
public struct RecoveryDocument: Codable, Sendable, Equatable {
    public static let maximumBytes = 2 * 1024 * 1024
    public static let contentTypes = ["image/jpeg", "image/png", "application/pdf"]

    public var contentType: String
    public var data: String

    public init(contentType: String, data: String) {
        self.contentType = contentType
        self.data = data
    }
}

/// `POST /2fa/recovery`: the account's email address, what the person wants the reviewer to
/// know, and an optional document. Answered alike whether or not an account has that address.
public struct RecoveryStartRequest: Codable, Sendable {
    /// The longest message, in characters.
    public static let maximumMessageLength = 2000

    public var email: String
    public var message: String?
    public var document: RecoveryDocument?

    public init(email: String, message: String? = nil, document: RecoveryDocument? = nil) {
        self.email = email
        self.message = message
        self.document = document
    }
}

/// A recovery request as its starter sees it: no personal data, only where it stands.
public struct RecoveryStatus: Codable, Sendable, Equatable {
    public var recoveryId: UUID
    public var state: RecoveryState
    public var createdAt: Date
    /// When the current step runs out (the code, the review, or the pass).
    public var expiresAt: Date
    /// Approved with a waiting period: when the pass starts to work.
    public var usableFrom: Date?
    public var decidedAt: Date?

    public init(
        recoveryId: UUID, state: RecoveryState, createdAt: Date, expiresAt: Date, usableFrom: Date? = nil,
        decidedAt: Date? = nil
    ) {
        self.recoveryId = recoveryId
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usableFrom = usableFrom
        self.decidedAt = decidedAt
    }
}

/// `POST /2fa/recovery-cancel`: the token of a "this wasn't me" link.
public struct RecoveryCancelRequest: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// `POST /2fa/recovery-pass`: the pass an approval sent to the account's email address.
public struct RecoveryRedeemRequest: Codable, Sendable {
    public var pass: String
    public init(pass: String) { self.pass = pass }
}

/// `POST /admin/recovery/{id}/approve` and `…/deny`: the reviewer's note, kept with the
/// decision and shown in the audit trail.
public struct RecoveryDecisionRequest: Codable, Sendable {
    public static let maximumNoteLength = 1000

    public var note: String
    public init(note: String) { self.note = note }
}

/// A recovery request as a reviewer sees it.
public struct AdminRecoveryRequest: Codable, Sendable, Equatable {
    public var id: UUID
    public var state: RecoveryState
    public var userId: UUID
    public var username: String
    public var email: String
    public var message: String
    /// The attached document's type and size, while it is kept (until the request is decided).
    public var documentType: String?
    public var documentBytes: Int?
    public var createdAt: Date
    public var emailVerifiedAt: Date?
    public var expiresAt: Date
    public var decidedAt: Date?
    public var decidedBy: UUID?
    public var note: String?
    public var ipAddress: String?
    public var userAgent: String?
    /// The account's state now (`active`, `locked`, `disabled`): a locked account may be one its
    /// owner locked by disowning an earlier recovery.
    public var accountStatus: String
    /// How many earlier recoveries of this account its owner disowned ("this wasn't me").
    public var disownedRecoveries: Int

    public init(
        id: UUID, state: RecoveryState, userId: UUID, username: String, email: String, message: String,
        documentType: String?, documentBytes: Int?, createdAt: Date, emailVerifiedAt: Date?, expiresAt: Date,
        decidedAt: Date?, decidedBy: UUID?, note: String?, ipAddress: String?, userAgent: String?,
        accountStatus: String, disownedRecoveries: Int
    ) {
        self.id = id
        self.state = state
        self.userId = userId
        self.username = username
        self.email = email
        self.message = message
        self.documentType = documentType
        self.documentBytes = documentBytes
        self.createdAt = createdAt
        self.emailVerifiedAt = emailVerifiedAt
        self.expiresAt = expiresAt
        self.decidedAt = decidedAt
        self.decidedBy = decidedBy
        self.note = note
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.accountStatus = accountStatus
        self.disownedRecoveries = disownedRecoveries
    }
}

/// `GET /admin/recovery`: requests whose email was proven, waiting for review first.
public struct AdminRecoveryResponse: Codable, Sendable {
    public var requests: [AdminRecoveryRequest]
    public init(requests: [AdminRecoveryRequest]) { self.requests = requests }
}
