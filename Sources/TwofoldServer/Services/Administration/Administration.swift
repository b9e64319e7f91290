import Foundation
import TwofoldAPI

/// Administration (API.md), as a use case: the users, one user's sessions and audit trail,
/// unlocking an account, the audit log. The caller is an administrator (`AdminOnly` checked);
/// every change is itself audited with the administrator as its actor.
struct Administration: Sendable {
    let clock: ServerClock
    let audit: Auditor
    let sessions: SessionService
    let guards: FactorGuard
    let users: any UserStore
    let reset: AccountReset
    let policy: SignInPolicy
    let recoveries: any RecoveryStore

    func users(_ query: UserQuery) async throws -> AdminUsersResponse {
        AdminUsersResponse(
            users: try await users.users(
                matching: query.q, offset: query.page.range.lowerBound, limit: query.page.range.count
            ).map(\.dto))
    }

    func user(_ id: UUID?) async throws -> AdminUserDetail {
        let user = try await find(id)
        return AdminUserDetail(
            user: user.dto, sessions: try await sessions.list(userID: user.id, current: nil),
            audit: try await audit.events(userID: user.id))
    }

    /// The account's factors locked now by wrong codes, with when each lock ends.
    func lockouts(_ id: UUID?) async throws -> [(factor: FactorMethod, until: Date)] {
        try await guards.lockouts(userID: try await find(id).id)
    }

    /// Unlocks the account; its factor lockouts and 24-hour failure count start again too. It
    /// changes how the account signs in (wrong-code locks gone, more guesses allowed), so the
    /// administrator steps up first, as for a reset (issue V item 5). It lifts no recovery's hold:
    /// only a reset does.
    func unlock(_ id: UUID?, by admin: AuthenticatedUser, adminUser: User, origin: RequestOrigin) async throws
        -> UserDTO
    {
        try await policy.require(.administer, caller: admin, user: adminUser)
        var user = try await find(id)
        // A recovery its owner disowned: whatever an in-flight request of the recovered session
        // added while the account was being locked goes before the lock lifts.
        if try await recoveries.releaseDisowned(userID: user.id, now: clock.now()) > 0 {
            try await reset.removeEverySecondFactor(
                of: user, actor: admin.userID, why: "unlocked after a disowned recovery", unlock: false, origin: origin)
        }
        let wasLocked = try await users.unlock(userID: user.id, now: clock.now())
        if wasLocked { user = try await find(id) }
        try await guards.reset(userID: user.id)
        try await audit.record(
            .userUnlocked, user: user.id, actor: admin.userID, detail: wasLocked ? "unlocked" : "was not locked",
            origin: origin)
        return user.dto
    }

    /// Removes every second factor of the user and signs them out everywhere (they lost their
    /// factors and cannot recover on their own); the administrator steps up first.
    func resetMFA(_ id: UUID?, by admin: AuthenticatedUser, adminUser: User, origin: RequestOrigin) async throws
        -> UserDTO
    {
        try await policy.require(.administer, caller: admin, user: adminUser)
        let user = try await find(id)
        _ = try await recoveries.release(userID: user.id, now: clock.now())
        try await reset.removeEverySecondFactor(
            of: user, actor: admin.userID, why: "reset by an administrator", origin: origin)
        return try await find(id).dto
    }

    func events(_ query: AuditQuery) async throws -> AuditEventsResponse {
        AuditEventsResponse(
            events: try await audit.events(
                userID: query.userId, type: query.type, from: query.from, to: query.to,
                offset: query.page.range.lowerBound, limit: query.page.range.count))
    }

    /// The account's last few successful sign-ins, newest first: what a reviewer of a recovery
    /// compares with the request (an owner who signed in yesterday from here rarely needs one).
    func recentSignIns(_ userID: UUID, limit: Int = 3) async throws -> [AuditEventDTO] {
        try await audit.events(userID: userID, type: AuditEvent.loginSucceeded.rawValue, limit: limit)
    }

    /// The usernames of the accounts `ids` name (those that still exist), for a list of events.
    func usernames(_ ids: Set<UUID>) async throws -> [UUID: String] {
        var names: [UUID: String] = [:]
        for id in ids { names[id] = try await users.user(id: id)?.username }
        return names
    }

    /// The account `id` names, as stored (`404` when there is none).
    func account(_ id: UUID?) async throws -> User { try await find(id) }

    /// The account whose username or email address is `identifier`, if any.
    func account(named identifier: String) async throws -> User? {
        try await users.user(identifier: identifier.lowercased())
    }

    private func find(_ id: UUID?) async throws -> User {
        guard let id, let user = try await users.user(id: id) else {
            throw Problem(status: 404, code: .notFound, title: "No such user")
        }
        return user
    }
}
