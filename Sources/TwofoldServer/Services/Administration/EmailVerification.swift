import Foundation
import TwofoldAPI

/// Proving the account's email address (issue W item 3): a link goes to it when the account is
/// made, and again on request; until one is used, the address receives no password-reset link,
/// no recovery code and no security notice (it may be a stranger's). Changing the address by a
/// code, or turning email codes on, proves it too.
struct EmailVerification: Sendable {
    let configuration: Configuration
    let clock: ServerClock
    let links: EmailLinks
    let users: any UserStore
    let outbox: Outbox
    let audit: Auditor
    let rateLimiter: RateLimiter
    let rules: ProductRules

    /// The subject of the message with the link.
    static let subject = "Confirm your email address for Twofold"

    func status(of user: User) -> EmailVerificationStatus {
        EmailVerificationStatus(email: user.email, verifiedAt: user.emailVerifiedAt)
    }

    /// Sends a link to `user`'s address unless it is verified already (a new account's first).
    func sendLink(to user: User, origin: RequestOrigin) async throws {
        guard user.emailVerifiedAt == nil, configuration.delivers(.email) else { return }
        let link = try await links.issue(
            .verifyEmail, for: user, lifetime: rules.emailVerificationLifetime, origin: origin)
        try await outbox.enqueue(
            .email, to: user.email, subject: Self.subject,
            body: "Hello \(user.username),\n\nConfirm that this address is yours by opening this link within "
                + "\(rules.emailVerificationLifetime.inWords):\n\n\(links.url(Pages.verifyEmail, token: link.token))"
                + "\n\nOnce it is confirmed, this address can reset a forgotten password and receives a notice "
                + "whenever your sign-in methods change. If you did not make a Twofold account, ignore this message.",
            now: clock.now())
    }

    /// Another link, on the signed-in owner's request (`202`); nothing is sent for an address
    /// already verified. Throttled per account.
    func resend(for user: User, origin: RequestOrigin) async throws -> EmailVerificationStatus {
        guard user.emailVerifiedAt == nil else { return status(of: user) }
        guard configuration.delivers(.email) else {
            throw Problem(
                status: 409, code: .conflict, title: "Email is switched off on this server",
                detail: "This server sends no email, so the address cannot be confirmed. Ask your administrator.")
        }
        try await rateLimiter.require(
            "verify-email:\(user.id.uuidString)", rule: .init(rules.emailVerificationPerAccount), now: clock.now())
        try await sendLink(to: user, origin: origin)
        return status(of: user)
    }

    /// The link's token, from a session of its account: the address it went to is verified,
    /// while it is still the account's. The link alone is not enough: the address may be a
    /// stranger's, who must not be able to make it carry the account's password resets.
    func verify(token: String, caller: AuthenticatedUser, origin: RequestOrigin) async throws
        -> EmailVerificationStatus
    {
        let link = try await links.live(token, purpose: .verifyEmail)
        guard link.userID == caller.userID else {
            throw Problem(
                status: 403, code: .forbidden, title: "This link is for another account",
                detail: "Sign in to the account this address was given for, then open the link again.",
                errors: ["token": "is for another account"])
        }
        return try await links.claimed(link) {
            guard try await users.verifyEmail(link.email, userID: link.userID, now: clock.now()),
                let user = try await users.user(id: link.userID)
            else {
                throw Problem(
                    status: 409, code: .conflict, title: "The address changed",
                    detail: "The account's email address changed since this link was sent; the new one is "
                        + "confirmed by its own code.", errors: ["token": "is for another address"])
            }
            try await audit.record(.emailVerified, user: user.id, detail: Masking.email(user.email), origin: origin)
            return status(of: user)
        }
    }
}
