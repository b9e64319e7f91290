import Foundation
import TwofoldSQLite

/// The rule that ends what a sign-in under way would start when the account's sessions are all
/// ended: **a session, a remembered device or a login flow counts only while its epoch is the
/// account's, and no sign-in starts while the account's factors are being reset.**
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
/// needed on a sign-in's path: the check is made where the row is used, not where it is written.
///
/// An end of every session moves the count by two. An end that also removes factors (an MFA
/// reset, a recovery, a password change that removes keys) is a *reset*: it moves the count to
/// the next odd value before it revokes and removes (`opening`), and to the next even value once
/// the factors are gone (`closing`). While the count is odd, no sign-in starts
/// (`SessionService.newSession` and `LoginFlowService.start` refuse an odd count), so no session
/// can prove a factor the removal has not reached yet and add one behind it. One reset runs at a
/// time per account (`users.reset_claimed_until`, taken by `opening`). The session an end keeps
/// (a password change keeps the caller's) is carried to the new count before the count moves.
enum SessionEpoch {
    /// The condition that a row of `table` (`sessions`, `trusted_devices`, `login_flows`, with
    /// `user_id` and `session_epoch` columns) is not behind its account.
    static func current(_ table: String) -> String {
        "\(table).session_epoch >= (SELECT users.session_epoch FROM users WHERE users.id = \(table).user_id)"
    }

    /// Whether an account at `epoch` is between a reset's `opening` and `closing`, when no
    /// sign-in starts.
    static func isResetting(_ epoch: Int) -> Bool { epoch % 2 != 0 }

    /// How an end moves the count, in SQL over `session_epoch`: past every session (by two, so a
    /// reset under way stays open), to the next odd value, or to the next even value.
    enum Move {
        case past, opening, closing

        var next: String {
            switch self {
            case .past: "session_epoch + 2"
            case .opening: "session_epoch + 1 + (session_epoch % 2)"
            case .closing: "session_epoch + 2 - (session_epoch % 2)"
            }
        }
    }

    /// The statement that moves the account's count past every session, run before the
    /// revocation it stands for.
    static func raising(userID: UUID) -> Statement {
        Statement("UPDATE users SET session_epoch = \(Move.past.next) WHERE id = ?", .uuid(userID))
    }

    /// `opening`'s claim (`claim`, this reset's own, until `until`) and move in one statement:
    /// changes nothing while another reset holds an unexpired claim.
    static func opening(userID: UUID, claim: String, now: Date, until: Date) -> Statement {
        Statement(
            """
            UPDATE users SET session_epoch = \(Move.opening.next), reset_claim = ?, reset_claimed_until = ?
            WHERE id = ? AND (reset_claimed_until IS NULL OR reset_claimed_until <= ?)
            """, .text(claim), .date(until), .uuid(userID), .date(now))
    }

    /// `closing`'s move, with the claim let go: only while the claim is still `claim` (a reset
    /// that outlived its claim, taken over by another, leaves the closing to that one).
    static func closing(userID: UUID, claim: String) -> Statement {
        Statement(
            """
            UPDATE users SET session_epoch = \(Move.closing.next), reset_claim = NULL, reset_claimed_until = NULL
            WHERE id = ? AND reset_claim = ?
            """, .uuid(userID), .text(claim))
    }

    /// The accounts whose reset was cut short (its server stopped, or its closing failed): a
    /// claim that ran out while the count was odd.
    static func abandoned(now: Date) -> Statement {
        Statement(
            "SELECT id FROM users WHERE reset_claimed_until IS NOT NULL AND reset_claimed_until <= ?", .date(now))
    }

    /// Closes `userID`'s abandoned reset, if it still is one.
    static func closingAbandoned(userID: UUID, now: Date) -> Statement {
        Statement(
            """
            UPDATE users SET session_epoch = \(Move.closing.next), reset_claim = NULL, reset_claimed_until = NULL
            WHERE id = ? AND reset_claimed_until IS NOT NULL AND reset_claimed_until <= ?
            """, .uuid(userID), .date(now))
    }

    /// The statement that carries the live session `kept` to the count `move` is about to make,
    /// so the one session an end keeps stays live across it.
    static func carrying(_ kept: UUID, userID: UUID, _ move: Move) -> Statement {
        let next = move.next.replacingOccurrences(of: "session_epoch", with: "users.session_epoch")
        return Statement(
            """
            UPDATE sessions SET session_epoch = (SELECT \(next) FROM users WHERE users.id = ?)
            WHERE id = ? AND user_id = ? AND \(SQLSessionStore.live)
            """, .uuid(userID), .uuid(kept), .uuid(userID))
    }
}
