/// The signed-in caller's own account: what a signed-in endpoint reads before its use case.
/// Controllers hold this service, never the user store.
struct Callers: Sendable {
    let users: any UserStore

    /// `caller`'s account; `401` when it no longer exists.
    func account(of caller: AuthenticatedUser) async throws -> User {
        guard let user = try await users.user(id: try caller.userID) else {
            throw BearerAuthentication.unauthorized("The account no longer exists.")
        }
        return user
    }
}
