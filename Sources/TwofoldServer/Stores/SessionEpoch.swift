import Foundation
import TwofoldSQLite

/// The rule that ends what a sign-in under way would start when the account's sessions are all
/// ended: **a session, a remembered device or a login flow counts only while its epoch is the
/// account's.**
///
/// A sign-in checks a password or a factor, then writes its session; a password change, an
/// administrator's MFA reset, a recovery, an account lock or "sign out everywhere" can end every
/// session in between. Its `revokeAll` misses a session written after it, so the account keeps a
/// count (`users.session_epoch`) that every such end raises *before* it revokes. A sign-in reads
/// the count with the account, before it checks anything, and its session, its remembered device
/// (and its login flow, which carries the count from the password to the second step) keep that
/// value; each is live only while it is not behind the account's. A sign-in overtaken by an end
/// therefore starts a session that nothing accepts: no bearer check, refresh, page or factor write
/// (`AddingSession`) takes it, and a remembered device made then skips no second step. No lock is
/// needed: the check is made where the row is used, not where it is written.
///
/// An end that also removes factors raises the count again after the removal
/// (`AccountReset`), so a sign-in that read the count between the two, and proved a factor
/// before it went, is overtaken too. The session an end keeps (a password change keeps the
/// caller's) is carried to the new count before the count moves (`SessionStore.revokeAll`).
enum SessionEpoch {
    /// The condition that a row of `table` (`sessions`, `trusted_devices`, `login_flows`, with
    /// `user_id` and `session_epoch` columns) is not behind its account.
    static func current(_ table: String) -> String {
        "\(table).session_epoch >= (SELECT users.session_epoch FROM users WHERE users.id = \(table).user_id)"
    }

    /// The statement that raises the account's count, run before the revocation it stands for.
    static func raising(userID: UUID) -> Statement {
        Statement("UPDATE users SET session_epoch = session_epoch + 1 WHERE id = ?", .uuid(userID))
    }

    /// The statement that carries the live session `kept` to the count `raising` is about to
    /// make, so the one session an end keeps stays live across it.
    static func carrying(_ kept: UUID, userID: UUID) -> Statement {
        Statement(
            """
            UPDATE sessions SET session_epoch = (SELECT users.session_epoch + 1 FROM users WHERE users.id = ?)
            WHERE id = ? AND user_id = ? AND revoked_at IS NULL AND \(current("sessions"))
            """, .uuid(userID), .uuid(kept), .uuid(userID))
    }
}
