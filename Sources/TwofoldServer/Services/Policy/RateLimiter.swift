import Foundation
import TwofoldAPI

/// Throttles (API.md "throttles"): token buckets in a `RateLimitStore`. Taking a token is one
/// conditional update, never a read followed by a write, so a limit holds under parallel
/// requests and across server instances.
struct RateLimiter: Sendable {
    /// A bucket of `capacity` tokens refilled at `perSecond`.
    struct Rule: Sendable {
        let capacity: Double
        let perSecond: Double

        init(capacity: Double, perSecond: Double) {
            self.capacity = capacity
            self.perSecond = perSecond
        }

        /// The bucket a throttle setting describes.
        init(_ throttle: ProductRules.Throttle) {
            self.init(capacity: Double(throttle.burst), perSecond: 1 / throttle.refillSeconds)
        }
    }

    /// What `take` found.
    enum Outcome: Equatable {
        case allowed
        /// Wait this many whole seconds for the next token.
        case limited(retryAfter: Int)
    }

    let store: any RateLimitStore

    /// The bucket named `name` of one client: its address, or for IPv6 its /64
    /// (`ClientScope`), so one host that fills its prefix with addresses is still one client.
    /// Every per-address limit keys its bucket here (issue V item 4).
    static func addressKey(_ name: String, address: String?) -> String { "\(name):ip:\(ClientScope.of(address))" }

    /// The bucket of sign-in attempts from one client (password and passwordless).
    static func signInKey(address: String?) -> String { addressKey("login", address: address) }

    /// Takes one token from the bucket `key`, creating it full if it does not exist yet.
    func take(_ key: String, rule: Rule, now: Date) async throws -> Outcome {
        if try await store.take(key, capacity: rule.capacity, perSecond: rule.perSecond, now: now) { return .allowed }
        let missing = max(0, 1 - (try await store.tokens(key)))
        return .limited(retryAfter: max(1, Int((missing / rule.perSecond).rounded(.up))))
    }

    /// Takes one token from the bucket `key`, or refuses with `429` and when to try again.
    func require(_ key: String, rule: Rule, now: Date) async throws {
        if case .limited(let retryAfter) = try await take(key, rule: rule, now: now) {
            throw Problem.rateLimited(retryAfter)
        }
    }

    /// Gives back the token a request took, when the bucket counts only what failed (a right
    /// password gives back the account's token).
    func giveBack(_ key: String, rule: Rule) async throws {
        try await store.giveBack(key, capacity: rule.capacity)
    }

    /// Fills the bucket again (after a successful sign-in, for example).
    func reset(_ key: String, rule: Rule, now: Date) async throws {
        try await store.refill(key, capacity: rule.capacity, now: now)
    }
}
