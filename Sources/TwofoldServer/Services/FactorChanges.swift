import Foundation
import TwofoldAPI

/// Adding a factor, or changing where codes go (issue S item 1). Without these rules a stolen
/// session with no recent second factor could add a factor it controls and step up with it:
/// - once the account has a second factor, adding another or changing a destination needs a
///   step-up (`requireStepUp`);
/// - a factor added in a session never steps that session up (`added` records it, and
///   `POST /auth/step-up` checks);
/// - the user is told by email and SMS whenever a factor is added (`notify`), so a factor they
///   did not add does not go unnoticed.
struct FactorChanges: Sendable {
    let secondFactors: SecondFactors
    let stepUp: StepUp
    let sessions: SessionService
    let outbox: Outbox
    let configuration: Configuration
    let clock: ServerClock

    /// Step-up for adding a factor: a recent second factor (not an SMS code alone) when the
    /// account already has one; nothing for an account protected by a password alone.
    func requireStepUp(for user: User, caller: AuthenticatedUser) async throws {
        guard try await !secondFactors.available(for: user).isEmpty else { return }
        try stepUp.requireRecentSecondFactor(caller)
    }

    /// The name a step-up method is recorded under when it is added: `totp`, `sms`, `email`,
    /// `backup`, `deviceKey:<deviceId>` (one device's key, not every device's) or
    /// `webauthn:<credential ID>` (one passkey).
    static func factorName(method: String, deviceID: String? = nil, credentialID: String? = nil) -> String {
        switch method {
        case "deviceKey": "deviceKey:\(deviceID ?? "")"
        case "webauthn": "webauthn:\(credentialID ?? "")"
        default: method
        }
    }

    /// Records on the caller's session that it added `factors`, and tells the user.
    func added(_ factors: [String], describedAs description: String, user: User, caller: AuthenticatedUser)
        async throws
    {
        try await sessions.recordAdded(factors, sessionID: caller.sessionID)
        try await notify(
            user, subject: "A sign-in method was added to your account",
            body: "Twofold: \(description) was added to your account. If this was not you, sign in, remove it "
                + "and change your password.")
    }

    /// Sends `body` to the user's email address and, when one is verified, phone number.
    func notify(_ user: User, subject: String, body: String) async throws {
        let now = clock.now()
        if configuration.delivers(.email) {
            try await outbox.enqueue(.email, to: user.email, subject: subject, body: body, now: now)
        }
        if configuration.delivers(.sms), let sms = user.verifiedPhone {
            try await outbox.enqueue(.sms, to: sms, body: body, now: now)
        }
    }
}

/// Step-up (seed 000, API.md): what a signed-in caller must have proven, and how recently, to
/// make a sensitive change.
struct StepUp: Sendable {
    let secondFactors: SecondFactors
    let clock: ServerClock
    /// How recent the proof must be (`ProductRules.stepUpWindow`).
    let window: TimeInterval

    /// The RFC 8176 values that count as a second factor.
    static let secondFactorMethods: Set<String> = ["otp", "sms", "hwk", "swk", "pin", "mfa", "fido", "face", "fpt"]

    /// A second factor proven within the window, otherwise `403 step_up_required` (complete it
    /// with `POST /auth/step-up`).
    func requireRecentSecondFactor(_ caller: AuthenticatedUser) throws {
        let recent = caller.authTime >= clock.now().addingTimeInterval(-window)
        guard recent, caller.methods.contains(where: Self.secondFactorMethods.contains) else {
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "Confirm with a second factor (POST /api/v1/auth/step-up), then repeat the request.")
        }
        // A session that proved nothing but an SMS code (seed 004's SMS sign-in) is one factor,
        // and the one a SIM swap hands over: it cannot remove or replace the others (issue S).
        guard !Set(caller.methods).subtracting(["mfa", "sms"]).isEmpty else {
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "An SMS code alone cannot change sign-in methods; confirm with another factor "
                    + "(POST /api/v1/auth/step-up) or sign in with your password.")
        }
    }

    /// Step-up for `user`: a recent second factor when the account has one; for an account
    /// protected by a password alone, a sign-in within the window (the strongest proof it can
    /// give).
    func require(caller: AuthenticatedUser, for user: User) async throws {
        if try await !secondFactors.available(for: user).isEmpty {
            return try requireRecentSecondFactor(caller)
        }
        guard caller.authTime >= clock.now().addingTimeInterval(-window) else {
            let minutes = Int((window / 60).rounded(.up))
            throw Problem(
                status: 403, code: .stepUpRequired, title: "Step-up required",
                detail: "Sign in again, then repeat the request within \(minutes) minute\(minutes == 1 ? "" : "s").")
        }
    }
}
