import Foundation
import TwofoldAPI

/// Single-use links sent by email (a forgotten password's reset, an address's verification):
/// made, found and claimed here, the one place their token is hashed and compared.
struct EmailLinks: Sendable {
    let store: any EmailLinkStore
    let clock: ServerClock
    let configuration: Configuration

    /// A new link of `purpose` for `user`'s address on file, living `lifetime`; it ends the
    /// user's earlier links of that purpose. The token goes only into the message.
    func issue(
        _ purpose: EmailLinkRecord.Purpose, for user: User, lifetime: TimeInterval, origin: RequestOrigin
    ) async throws -> (token: String, expiresAt: Date) {
        let now = clock.now()
        let token = SecureToken.generate()
        let record = EmailLinkRecord(
            id: SecureRandom.timeOrderedUUID(at: now), userID: user.id, purpose: purpose, email: user.email,
            tokenHash: SecureToken.hash(token), createdAt: now, expiresAt: now.addingTimeInterval(lifetime),
            ipAddress: origin.address)
        try await store.insert(record)
        return (token, record.expiresAt)
    }

    /// The page at `page` on this server with `token` in its query, for a message.
    func url(_ page: Page, token: String) -> String {
        "\(configuration.publicURL)/\(page.path)?token=\(token)"
    }

    /// The live link of `purpose` that `token` names: unknown, used and expired links are refused
    /// with words that say what to do.
    func live(_ token: String, purpose: EmailLinkRecord.Purpose) async throws -> EmailLinkRecord {
        guard (16...128).contains(token.count), let link = try await store.link(tokenHash: SecureToken.hash(token)),
            link.purpose == purpose
        else { throw Self.unknown }
        if link.usedAt != nil { throw Self.used }
        if link.expiresAt <= clock.now() { throw Self.expired }
        return link
    }

    /// Claims `link` once (however many race), runs `body`, and gives the link back when `body`
    /// throws (a wrong code may be typed again on the same link).
    func claimed<T>(_ link: EmailLinkRecord, _ body: () async throws -> T) async throws -> T {
        let now = clock.now()
        guard try await store.claim(id: link.id, now: now) else {
            throw link.expiresAt <= now ? Self.expired : Self.used
        }
        do {
            return try await body()
        } catch {
            try await store.release(id: link.id, claimedAt: now)
            throw error
        }
    }

    func endAll(userID: UUID, purpose: EmailLinkRecord.Purpose) async throws {
        try await store.endAll(userID: userID, purpose: purpose, now: clock.now())
    }

    static let unknown = Problem(
        status: 404, code: .notFound, title: "Link not valid",
        detail: "This link is not valid. Open the newest message and copy the whole link.",
        errors: ["token": "is not valid"])
    static let used = Problem(
        status: 409, code: .alreadyUsed, title: "Link already used",
        detail: "This link was already used, or a newer one replaced it. Ask for a new one.",
        errors: ["token": "was already used"])
    static let expired = Problem(
        status: 401, code: .expired, title: "Link expired", detail: "This link has expired. Ask for a new one.",
        errors: ["token": "has expired"])
}
