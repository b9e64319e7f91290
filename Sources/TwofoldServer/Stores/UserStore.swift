import Foundation

/// Users (`users`). Only what the stores' services need so far; the rest of the table is still
/// read and written through the `User` model while it moves here.
protocol UserStore: Sendable {
    /// Locks an active account; whether this call did.
    func lock(userID: UUID, now: Date) async throws -> Bool
    /// Whether the user exists and is not active (locked or disabled).
    func isInactive(userID: UUID) async throws -> Bool
}

/// `UserStore` on the server's database.
struct SQLUserStore: UserStore {
    let database: any SQLExecutor

    func lock(userID: UUID, now: Date) async throws -> Bool {
        try await database.changes(
            Statement(
                "UPDATE users SET status = 'locked', updated_at = ? WHERE id = ? AND status = 'active'", .date(now),
                .uuid(userID))) > 0
    }

    func isInactive(userID: UUID) async throws -> Bool {
        try await database.count(
            Statement("SELECT id FROM users WHERE id = ? AND status <> 'active'", .uuid(userID))) > 0
    }
}
