import Foundation

/// The account's password typed again, by a signed-in person: to change it, or to step up with
/// it. One throttle per account (`ProductRules.passwordChange`) counts both, so neither way gives
/// a stolen session more guesses; a right password refills it.
struct PasswordReentry: Sendable {
    let passwords: PasswordHasher
    let rateLimiter: RateLimiter
    let rules: ProductRules
    let clock: ServerClock

    /// Whether `password` is `user`'s; `429` once the account's guesses are spent.
    func matches(_ password: String, of user: User) async throws -> Bool {
        let now = clock.now()
        let key = "password-change:\(user.id)"
        try await rateLimiter.require(key, rule: .init(rules.passwordChange), now: now)
        guard try await passwords.verify(password, against: user.passwordHash) else { return false }
        try await rateLimiter.reset(key, rule: .init(rules.passwordChange), now: now)
        return true
    }
}
