import Foundation
import Vapor

/// Adding a factor, or changing where codes go (issue S item 1). Without these rules a stolen
/// session with no recent second factor could add a factor it controls and step up with it:
/// - once the account has a second factor, adding another or changing a destination needs a
///   step-up (`requireStepUp`);
/// - a factor added in a session never steps that session up (`recordAdded`, checked by
///   `POST /auth/step-up`);
/// - the user is told by email and SMS whenever a factor is added (`notify`), so a factor they
///   did not add does not go unnoticed.
enum FactorChanges {
    /// Step-up for adding a factor: a recent second factor (not an SMS code alone) when the
    /// account already has one; nothing for an account protected by a password alone.
    static func requireStepUp(for user: User, request: Request) async throws {
        guard try await !SecondFactors.available(for: user, in: request.twofold.users).isEmpty else { return }
        try request.requireRecentSecondFactor()
    }

    /// The name a step-up method is recorded under when it is added: `totp`, `sms`, `email`,
    /// `backup`, or `deviceKey:<deviceId>` (one device's key, not every device's).
    static func factorName(method: String, deviceID: String? = nil) -> String {
        method == "deviceKey" ? "deviceKey:\(deviceID ?? "")" : method
    }

    /// Records on the caller's session that it added `factors`, and tells the user.
    static func added(_ factors: [String], describedAs description: String, user: User, request: Request)
        async throws
    {
        let caller = try request.caller
        try await request.twofold.sessions.recordAdded(factors, sessionID: caller.sessionID)
        try await notify(
            user, subject: "A sign-in method was added to your account",
            body: "Twofold: \(description) was added to your account. If this was not you, sign in, remove it "
                + "and change your password.",
            request: request)
    }

    /// Sends `body` to the user's email address and, when one is verified, phone number.
    static func notify(_ user: User, subject: String, body: String, request: Request) async throws {
        let now = request.twofold.clock.now()
        if request.twofold.configuration.delivers(.email) {
            try await request.twofold.outbox.enqueue(.email, to: user.email, subject: subject, body: body, now: now)
        }
        if request.twofold.configuration.delivers(.sms), let sms = user.verifiedPhone {
            try await request.twofold.outbox.enqueue(.sms, to: sms, body: body, now: now)
        }
    }
}
