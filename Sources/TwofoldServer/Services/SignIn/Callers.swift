/// The signed-in caller's own account: what a signed-in endpoint reads before its use case.
/// Controllers hold this service, never the user store.
struct Callers: Sendable {
    let users: any UserStore

    /// `caller`'s account, or `nil` when it no longer exists.
    func existing(_ caller: AuthenticatedUser) async throws -> User? {
        try await users.user(id: caller.userID)
    }

    /// `caller`'s account; `401` when it no longer exists.
    func account(of caller: AuthenticatedUser) async throws -> User {
        guard let user = try await existing(caller) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        return user
    }
}
