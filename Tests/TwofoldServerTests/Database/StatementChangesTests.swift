import Foundation
import Testing
import TwofoldAPI
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// `Request.changes`: how many rows a write changed, which every claim in a sign-in decides by
/// (attempt slot, time step, flow). SQLite counts them itself; PostgreSQL returns a row per
/// changed row. Runs on both, inside a unit of work and outside one.
@Suite(.tags(.database))
struct StatementChangesTests {
    static let claim = """
        UPDATE factor_guards SET attempts = attempts + 1
        WHERE user_id = ? AND factor = ? AND attempts < ?
        """
    static let upsert = """
        INSERT INTO factor_guards (user_id, factor, attempts, lockouts) VALUES (?, ?, 1, 0)
        ON CONFLICT (user_id, factor) DO UPDATE SET attempts = factor_guards.attempts + 1
        WHERE factor_guards.attempts < ?
        """

    static func userID(_ app: Application) async throws -> UUID {
        _ = try await Accounts.signUp(app)
        return try #require(try await app.twofold.users.users(matching: nil, offset: 0, limit: 1).first?.id)
    }

    static func attempts(_ user: UUID, _ request: Request) async throws -> [Int] {
        try await request.application.twofold.database.rows(
            Statement("SELECT attempts FROM factor_guards WHERE user_id = ? AND factor = 'test'", .uuid(user)),
            { try $0.integer(0) })
    }

    @Test func aConditionalUpdateCountsTheRowsItChangedAndNoneOnceTheConditionFails() async throws {
        try await withTestApp { app in
            let user = try await Self.userID(app)
            let request = DirectSQLiteChecks.request(app)
            let upsert = Statement(Self.upsert, .uuid(user), .text("test"), .integer(2))
            // Inserted, then updated once, then refused by the update's condition.
            #expect(try await request.application.twofold.database.changes(upsert) == 1)
            #expect(try await request.application.twofold.database.changes(upsert) == 1)
            #expect(try await request.application.twofold.database.changes(upsert) == 0)
            #expect(try await Self.attempts(user, request) == [2])

            let claim = Statement(Self.claim, .uuid(user), .text("test"), .integer(3))
            let counted = try await request.application.twofold.unitsOfWork.run(on: request.eventLoop) {
                [
                    try await request.application.twofold.database.changes(claim),
                    try await request.application.twofold.database.changes(claim),
                ]
            }
            #expect(counted == [1, 0])
            #expect(try await Self.attempts(user, request) == [3])
            // No row matches: nothing changed, whatever the statement before changed.
            #expect(
                try await request.application.twofold.database.changes(
                    Statement(Self.claim, .uuid(UUID()), .text("test"), .integer(9)))
                    == 0)
        }
    }

    @Test func ofManyParallelClaimsOnOneRowExactlyOneChangesIt() async throws {
        try await withTestApp { app in
            let user = try await Self.userID(app)
            let request = DirectSQLiteChecks.request(app)
            #expect(
                try await request.application.twofold.database.changes(
                    Statement(Self.upsert, .uuid(user), .text("test"), .integer(1))) == 1
            )
            let once = Statement(Self.claim, .uuid(user), .text("test"), .integer(2))
            let won = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        let request = DirectSQLiteChecks.request(app)
                        return try await request.application.twofold.unitsOfWork.run(on: request.eventLoop) {
                            try await request.application.twofold.database.changes(once)
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(won == 1)
            #expect(try await Self.attempts(user, request) == [2])
        }
    }
}
