import FluentKit
import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// Twofold's own SQLite connection (`DirectSQLite`): one commit for a unit of work, its writes
/// visible to Fluent's connections before anything else reads them, failed statements undone
/// alone. SQLite only: PostgreSQL has no such connection.
@Suite(.enabled(if: TestDatabase.isSQLiteFile))
struct DirectSQLiteTests {
    @Test func theSecondStepOfASignInCommitsOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let direct = try #require(app.twofold.sqlite)
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let before = try await direct.commitCount()
            #expect(try await TOTPSteps.validate(app, flow: flow, code: TOTPSteps.code(secret, clock)).0 == 200)
            // Guard slot, time step, guard reset, flow, session, refresh token, audit: one commit.
            #expect(try await direct.commitCount() - before == 1)
        }
    }

    /// Under load, units of work that arrive apart wait for the commit window and share one
    /// commit; each still answers only after it.
    @Test func underLoadUnitsOfWorkArrivingApartShareOneCommit() async throws {
        try await withTestApp { app in
            let direct = try #require(app.twofold.sqlite)
            let connection = direct.database.connection
            // Wide enough for the units below to arrive within it on a machine busy with the
            // rest of the suite (a 1-second window was once too short there).
            try await direct.thread.loop.submit {
                connection.commitWindow = .seconds(5)
                connection.busyWithin = .seconds(60)
            }.get()
            let request = DirectSQLiteChecks.request(app)
            try await request.application.twofold.audit.record(
                .userUnlocked, user: nil, detail: "makes the database busy", origin: request.origin)
            let before = try await direct.commitCount()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for unit in 0..<5 {
                    group.addTask {
                        try await request.application.twofold.unitsOfWork.run(on: request.eventLoop) {
                            try await request.application.twofold.audit.record(
                                .userUnlocked, user: nil, detail: "unit \(unit)", origin: .none)
                        }
                    }
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await group.waitForAll()
            }
            let commits = try await direct.commitCount() - before
            #expect(commits == 1, "5 units arriving 10 ms apart made \(commits) commits")
            #expect(try await DirectSQLiteChecks.events(of: .userUnlocked, app) == 6)
        }
    }

    /// Sign-ins that share a commit window, and so one transaction, still claim a time step
    /// once and stop evaluating wrong codes at the fifth: each claim sees the claims written
    /// before it in the same transaction.
    @Test func signInsSharingACommitWindowKeepSingleUseAndTheLockout() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let direct = try #require(app.twofold.sqlite)
            let connection = direct.database.connection
            let alice = try await Accounts.signUp(app, "alice")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: alice, clock: clock)
            _ = try await TOTPSteps.enable(app, tokens: try await Accounts.signUp(app, "bob"), clock: clock)
            var flows: [String] = []
            for index in 0..<20 { flows.append(try await TOTPSteps.startLogin(app, from: "10.2.0.\(index)")) }
            let bobsFlow = try await TOTPSteps.startLogin(app, "bob")
            try await direct.thread.loop.submit {
                connection.commitWindow = .seconds(1)
                connection.busyWithin = .seconds(60)
            }.get()
            // Submissions in parallel: they arrive within one window and share its commit.
            let submit: @Sendable ([(String, String)]) async throws -> [UInt] = { attempts in
                try await withThrowingTaskGroup(of: UInt.self) { group in
                    for (flow, code) in attempts {
                        group.addTask { try await TOTPSteps.validate(app, flow: flow, code: code).0 }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            let code = try TOTPSteps.code(secret, clock)
            let before = try await direct.commitCount()
            let right = try await submit(flows.map { ($0, code) })
            #expect(right.filter { $0 == 200 }.count == 1, "\(right)")
            // The claims did share transactions (20 sign-ins, far fewer commits).
            let commits = try await direct.commitCount() - before
            #expect(commits < 10, "\(commits) commits")
            // Alice's replays were wrong codes too: at most five of them were evaluated.
            let failures = try await AuditQueries.count(table: "factor_failures", on: app)
            #expect(failures <= 5)
            let wrong = try await submit((0..<20).map { (bobsFlow, String(100_000 + $0)) })
            #expect(try await AuditQueries.count(table: "factor_failures", on: app) - failures <= 5)
            #expect(wrong.filter { $0 == 429 }.count >= 15, "\(wrong)")
        }
    }

    /// A unit of work after a quiet spell starts at once; one during a busy spell waits for the
    /// window that is open, or opens one.
    @Test func onlyABusyDatabaseMakesUnitsOfWorkWait() async throws {
        try await withTestApp { app in
            let direct = try #require(app.twofold.sqlite)
            let connection = direct.database.connection
            // Busy: a commit within the last minute (a loaded test machine may take a while).
            try await direct.thread.loop.submit { connection.busyWithin = .seconds(60) }.get()
            try await app.twofold.audit.record(.userUnlocked, user: nil, detail: "commits", origin: .none)
            let shared = try await direct.thread.loop.submit {
                let first = connection.admission()
                return first != nil && first == connection.admission()
            }.get()
            #expect(shared)
            // Quiet: no commit within the last millisecond, and the window above has ended.
            try await direct.thread.loop.submit { connection.busyWithin = .milliseconds(1) }.get()
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await direct.thread.loop.submit { connection.admission() == nil }.get())
        }
    }

    @Test func aUnitsWritesAreCommittedBeforeItAnswers() async throws {
        try await withTestApp { app in
            let request = DirectSQLiteChecks.request(app)
            try await request.application.twofold.unitsOfWork.run(on: request.eventLoop) {
                try await request.application.twofold.audit.record(
                    .userUnlocked, user: nil, detail: "first", origin: request.origin)
                try await request.application.twofold.audit.record(
                    .userUnlocked, user: nil, detail: "second", origin: request.origin)
            }
            // Fluent reads on a connection of its own: it sees only what is committed.
            #expect(try await DirectSQLiteChecks.events(of: .userUnlocked, app) == 2)
        }
    }

    /// What brings a request back from the writer's thread to its own loop
    /// (`Request.nextToTheDatabase`): a task that prefers the loop runs there, also after a
    /// suspension.
    @Test func aTaskPreferringAnEventLoopRunsThere() async throws {
        try await withTestApp { app in
            let loop = app.eventLoopGroup.next()
            let ranThere = await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) { () async -> Bool in
                let before = loop.inEventLoop
                await Task.yield()
                return before && loop.inEventLoop
            }
            #expect(ranThere)
        }
    }

    @Test func aFailedStatementIsUndoneAloneAndTheRestOfTheGroupStands() async throws {
        try await withTestApp { app in
            let request = DirectSQLiteChecks.request(app)
            let id = UUID()
            let database = try #require(request.application.twofold.sqlite).database
            let insert: @Sendable (UUID, String) async throws -> Void = { id, detail in
                _ = try await database.changes(
                    Statement(
                        "INSERT INTO audit_events (id, occurred_at, type, detail) VALUES (?, ?, 'test.event', ?)",
                        .uuid(id), .date(Date()), .text(detail)))
            }
            let failure: (any Error)? = try await request.application.twofold.unitsOfWork.run(on: request.eventLoop) {
                try await insert(id, "first")
                var caught: (any Error)?
                do { try await insert(id, "duplicate") } catch { caught = error }
                try await insert(UUID(), "after")
                return caught
            }
            let error = try #require(failure as? any DatabaseError)
            #expect(error.isConstraintFailure)
            let details = try await #require(app.db as? any SQLDatabase)
                .raw("SELECT detail FROM audit_events WHERE type = 'test.event'").all()
                .map { try $0.decode(column: "detail", as: String.self) }
            #expect(Set(details) == ["first", "after"])
        }
    }

    /// Password, wrong code, right code and a refresh read indexes, never whole tables (each of
    /// those statements must cost the same with a million users as with two), and run the
    /// statements compiled the first time.
    @Test func signInStatementsReadIndexesAndAreCompiledOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let direct = try #require(app.twofold.sqlite)
            // Two users with an authenticator app, sessions, failures and codes in every table.
            var bobSecret: [UInt8] = []
            for name in ["alice", "bob"] {
                let tokens = try await Accounts.signUp(app, name)
                let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
                bobSecret = secret
                let flow = try await TOTPSteps.startLogin(app, name)
                #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").0 == 401)
                clock.advance(by: 30)
            }
            let before = try await direct.statementCosts()
            let flow = try await TOTPSteps.startLogin(app, "bob")
            #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").0 == 401)
            let client = app.client()
            let signedIn = try await client.send(
                API.SecondStep.validateTOTP,
                TOTPValidateRequest(tempToken: flow, code: try TOTPSteps.code(bobSecret, clock)))
            _ = try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: signedIn.refreshToken.token))
            let after = try await direct.statementCosts()
            #expect(after.fullScanSteps == before.fullScanSteps)
            #expect(after.reprepares == before.reprepares)
        }
    }

    /// The minute's sweep deletes through indexes on the times it deletes by: its cost follows
    /// what it deletes, not everything ever kept.
    @Test func aHousekeepingSweepReadsIndexesNotWholeTables() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let direct = try #require(app.twofold.sqlite)
            for name in ["alice", "bob"] {
                let tokens = try await Accounts.signUp(app, name)
                _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
                let flow = try await TOTPSteps.startLogin(app, name)
                #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").0 == 401)
                _ = try await app.client().send(
                    API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
            }
            let before = try await direct.statementCosts()
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(25 * 3600))
            #expect(try await AuditQueries.count(table: "login_flows", on: app) == 0)
            #expect(try await AuditQueries.count(table: "factor_failures", on: app) == 0)
            #expect(try await direct.statementCosts().fullScanSteps == before.fullScanSteps)
        }
    }

    @Test func aReadSeesWhatIsCommittedAndCannotWrite() async throws {
        try await withTestApp { app in
            let request = DirectSQLiteChecks.request(app)
            try await request.application.twofold.audit.record(
                .userUnlocked, user: nil, detail: "committed", origin: request.origin)
            let count = Statement("SELECT COUNT(*) FROM audit_events WHERE type = ?", .text("admin.user_unlocked"))
            #expect(try await request.application.twofold.database.readCommitted(count) { try $0.integer(0) } == [1])
            await #expect(throws: DirectSQLiteError.self) {
                _ = try await request.application.twofold.database.readCommitted(Statement("DELETE FROM audit_events"))
                { _ in 0 }
            }
            #expect(try await DirectSQLiteChecks.events(of: .userUnlocked, app) == 1)
        }
    }

    @Test func aStatementMissingABoundValueIsRefused() async throws {
        try await withTestApp { app in
            let request = DirectSQLiteChecks.request(app)
            // A kept statement keeps its last values; one bound short must not run with them.
            let database = try #require(request.application.twofold.sqlite).database
            let sql = "SELECT COUNT(*) AS n FROM users WHERE id = ? OR id = :other"
            await #expect(throws: DirectSQLiteError.self) {
                _ = try await database.rows(Statement(sql, .uuid(UUID()))) { try $0.integer(0) }
            }
            await #expect(throws: DirectSQLiteError.self) {
                _ = try await database.rows(Statement(sql, .uuid(UUID()))) { try $0.integer(0) }
            }
        }
    }

    /// The checkpointer learns from each checkpoint where the log stands, which is what it reads
    /// ahead by (`WALReadAhead`).
    @Test func aCheckpointAnswersTheFramesInTheLogAndThoseMovedIntoTheDatabase() async throws {
        try await withTestApp { app in
            let direct = try #require(app.twofold.sqlite)
            try await app.twofold.audit.record(.userUnlocked, user: nil, detail: "a write", origin: .none)
            let checkpoints = direct.checkpoints
            func checkpoint() async throws -> (frames: Int, backfilled: Int)? {
                try await direct.checkpointer.loop.submit { try DirectSQLite.checkpoint(checkpoints) }.get()
            }
            var log = try #require(try await checkpoint())
            #expect(log.frames > 0)
            // The whole log is moved once no reader holds on to its last frames (a background
            // job of the app may be reading at that moment).
            for _ in 0..<50 where log.backfilled < log.frames {
                try await Task.sleep(for: .milliseconds(10))
                log = try #require(try await checkpoint())
            }
            #expect(log.backfilled == log.frames)
        }
    }

    @Test func aStatementFromAnotherThreadIsCommittedWhenItAnswers() async throws {
        try await withTestApp { app in
            let request = DirectSQLiteChecks.request(app)
            let direct = try #require(app.twofold.sqlite)
            #expect(!direct.thread.isCurrent)
            let before = try await direct.commitCount()
            try await request.application.twofold.audit.record(
                .userUnlocked, user: nil, detail: "from elsewhere", origin: request.origin)
            #expect(try await direct.commitCount() == before + 1)
            #expect(try await DirectSQLiteChecks.events(of: .userUnlocked, app) == 1)
        }
    }
}
