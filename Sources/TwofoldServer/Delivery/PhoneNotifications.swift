import Foundation

/// What a phone is told through a push service: a request to approve, or a notice. No number
/// and no code: the phone fetches the request itself, signed in (the push service sees only this).
struct PhoneNotification: Sendable, Equatable {
    enum Kind: String, Sendable {
        /// A sign-in waits for approval (`requestId`).
        case approval
        /// Something the owner should know (`noticeId`).
        case notice
    }

    let kind: Kind
    /// The request's or the notice's id; a newer notification with the same id replaces it.
    let id: String
    let title: String
    let body: String
    /// When it is worth nothing any more (an approval's expiry, a notice's day); `nil`: Apple
    /// tries once and keeps nothing.
    let expiresAt: Date?
}

/// What became of a notification.
enum PhoneNotificationOutcome: Sendable, Equatable {
    case delivered
    /// The push service says the token is no longer the app's (uninstalled, or never valid):
    /// it is forgotten.
    case tokenGone
}

/// Hands notifications to a push service (Apple's: `APNsDelivery`).
protocol PhoneNotificationDelivery: Sendable {
    /// A short name for logs.
    var name: String { get }
    /// Sends `notification` to the phone with `token`, retrying what may pass; throws when it
    /// could not be delivered.
    func deliver(_ notification: PhoneNotification, to token: String) async throws -> PhoneNotificationOutcome
}
