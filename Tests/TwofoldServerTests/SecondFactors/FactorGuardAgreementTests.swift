import Foundation
import Testing
import TwofoldSQLite

@testable import TwofoldServer

/// The lockout rule is written twice: in Swift (`FactorGuard.isOpen`, which `admit` asks) and in
/// SQL (`SQLFactorGuardStore.closed`, inside the statement that signs in with an authenticator
/// code on PostgreSQL). Over a table of guard states, on the database the tests run on, the two
/// answer alike.
@Suite(.tags(.database))
struct FactorGuardAgreementTests {
    static let limit = 5

    /// Guard states around every edge: attempts below, at and above the limit, no lock, a lock
    /// that ran out, one ending now, one still running; lockouts that do not matter.
    static func states(now: Date) -> [FactorGuardState] {
        let locks: [Date?] = [
            nil, now.addingTimeInterval(-60), now, now.addingTimeInterval(1), now.addingTimeInterval(900),
        ]
        return [0, 1, 4, 5, 6].flatMap { attempts in
            locks.flatMap { lock in
                [0, 2].map { FactorGuardState(attempts: attempts, lockouts: $0, lockedUntil: lock) }
            }
        }
    }

    @Test func theSwiftAndSQLLockoutRulesAgree() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app)
            let user = try #require(try await app.twofold.users.users(matching: nil, offset: 0, limit: 1).first?.id)
            let database = app.twofold.database
            // Whole seconds, as both databases store them.
            let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded(.down))
            var checked = 0
            for (index, state) in Self.states(now: now).enumerated() {
                let factor = "agreement-\(index)"
                var values: [Statement.Value] = [
                    .uuid(user), .text(factor), .integer(state.attempts), .integer(state.lockouts),
                ]
                var lock = "NULL"
                if let until = state.lockedUntil {
                    values.append(.date(until))
                    lock = "?"
                }
                try await database.run(
                    Statement(
                        "INSERT INTO factor_guards (user_id, factor, attempts, lockouts, locked_until) "
                            + "VALUES (?, ?, ?, ?, \(lock))", values))
                let stored = try #require(try await app.twofold.guards.store.state(userID: user, factor: factor))
                #expect(stored == state, "stored as written")
                let closedInSQL =
                    try await database.count(
                        SQLFactorGuardStore.closed(userID: user, factor: factor, limit: Self.limit, now: now)) > 0
                let openInSwift = FactorGuard.isOpen(state, limit: Self.limit, now: now)
                #expect(openInSwift == !closedInSQL, "\(state)")
                checked += 1
            }
            #expect(checked == 50)
        }
    }
}
