import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import VaporTesting

@testable import TwofoldServer

@Suite struct TOTPFactorTests {
    /// A login answered with tokens where the test expected a second step.
    struct ExpectedSecondStep: Error {}

    @Test(.tags(.database)) func setupConfirmAndSignInWithTheSecondStep() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            let answer = try await client.send(API.TwoFactor.totpSetup, bearer: tokens.accessToken.token)
            #expect(
                answer.otpauthUri.hasPrefix(
                    "otpauth://totp/Twofold:alice@example.com?secret=\(answer.secret)&issuer=Twofold"))
            #expect(answer.qrCodeSvg.hasPrefix("<svg"))
            #expect(answer.expiresAt == clock.now.addingTimeInterval(600))
            #expect(answer.serverTime == clock.now)

            let secret = try Base32.decode(answer.secret)
            let enabled = try await client.send(
                API.TwoFactor.totpVerify, CodeRequest(code: try TOTPSteps.code(secret, clock)),
                bearer: tokens.accessToken.token)
            let codes = try #require(enabled.backupCodes)
            #expect(codes.count == 10)
            clock.advance(by: 30)

            let outcome = try await client.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            guard case .secondStep(let flow) = outcome else { throw ExpectedSecondStep() }
            #expect(flow.requires2FA && flow.tempToken == flow.otpFlowId)
            #expect(flow.availableMethods == [.totp, .backup])

            let signedIn = try await client.send(
                API.SecondStep.validateTOTP,
                TOTPValidateRequest(
                    tempToken: flow.otpFlowId, code: "\(CodeFormatter.display(try TOTPSteps.code(secret, clock)))"))
            let sessions = try await client.send(API.Auth.sessions, bearer: signedIn.accessToken.token)
            #expect(sessions.sessions.first { $0.current }?.methods == ["pwd", "otp", "mfa"])

            let status = try await client.send(API.TwoFactor.status, bearer: tokens.accessToken.token)
            #expect(status.isEnabled && status.totp.enabled && status.primaryMethod == .totp)
            #expect(status.backupCodes.remaining == 10)
            let mfaStatus = try await client.send(API.TwoFactor.mfaStatus, bearer: tokens.accessToken.token)
            #expect(
                mfaStatus.enabled && mfaStatus.methods == [.totp, .backup] && mfaStatus.backupCodesRemaining == 10)
        }
    }

    /// Issue E item 7: on PostgreSQL a second step with an app code is two round trips, the
    /// read of its flow and one statement for every write (`CodeSignInStore`). Runs in the
    /// PostgreSQL pass (`TWOFOLD_TEST_POSTGRES_URL`).
    @Test(.tags(.database)) func onPostgreSQLASecondStepWithAnAppCodeIsTwoStatements() async throws {
        guard let url = ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"], !url.isEmpty else { return }
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let sent = try #require(app.twofold.database.postgres).sent
            let before = sent.value
            let (status, problem) = try await TOTPSteps.validate(app, flow: flow, code: TOTPSteps.code(secret, clock))
            #expect(status == 200, "\(String(describing: problem))")
            #expect(sent.value - before == 2)
            // A replayed code on a new flow: refused as before, nothing written.
            let again = try await TOTPSteps.startLogin(app)
            let (replayed, refusal) = try await TOTPSteps.validate(
                app, flow: again, code: TOTPSteps.code(secret, clock))
            #expect(replayed == 409 && refusal?.code == "already_used")
            // A wrong code that locks nothing: the read and one statement for its writes.
            let wrongFrom = sent.value
            let (wrong, wrongProblem) = try await TOTPSteps.validate(app, flow: again, code: "000000")
            #expect(wrong == 401 && wrongProblem?.attemptsRemaining == 4)
            // The statement, then the day's count read again for the account's lock.
            #expect(sent.value - wrongFrom == 3)
            // The last before the lock goes step by step, and locks.
            for remaining in [3, 2, 1] {
                #expect(
                    try await TOTPSteps.validate(app, flow: again, code: "000000").1?.attemptsRemaining == remaining)
            }
            let (locked, lockProblem) = try await TOTPSteps.validate(app, flow: again, code: "000000")
            #expect(locked == 429 && lockProblem?.code == "locked")
        }
    }

    /// On PostgreSQL a wrong code that locks nothing is one statement, which counts the day's
    /// failures as they stood when it started. Wrong codes in parallel at 18 failures each
    /// counted 18 and none locked the account (found by an attacker's review): the count read
    /// again once each is committed locks it. The guard row is held meanwhile, as a commit in
    /// flight would hold it, so that all four start before any writes.
    @Test(.tags(.database)) func onPostgreSQLParallelWrongCodesAtTheDaysLimitLockTheAccount() async throws {
        guard let url = ProcessInfo.processInfo.environment["TWOFOLD_TEST_POSTGRES_URL"], !url.isEmpty else { return }
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let userID = tokens.user.id
            let guards = app.twofold.guards.store
            for _ in 0..<18 {
                try await guards.recordFailure(id: UUID(), userID: userID, factor: "backup", at: clock.now)
            }
            _ = try await guards.takeSlot(userID: userID, factor: "totp", limit: 5, now: clock.now)
            try await guards.clear(userID: userID, factor: "totp")
            var flows: [String] = []
            for index in 0..<4 { flows.append(try await TOTPSteps.startLogin(app, from: "10.2.0.\(index)")) }

            let (held, holding) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await app.db.transaction { db in
                    let sql = try #require(db as? any SQLDatabase)
                    try await sql.raw(
                        "SELECT 1 FROM factor_guards WHERE user_id = \(bind: userID) AND factor = 'totp' FOR UPDATE"
                    ).run()
                    holding.yield()
                    try await Task.sleep(for: .seconds(1))
                }
            }
            for await _ in held { break }
            let answers = try await withThrowingTaskGroup(of: (UInt, ProblemBody?).self) { group in
                for flow in flows { group.addTask { try await TOTPSteps.validate(app, flow: flow, code: "000000") } }
                return try await group.reduce(into: [(UInt, ProblemBody?)]()) { $0.append($1) }
            }
            try await holder.value
            let statuses = answers.map(\.0)
            #expect(statuses.contains(403), "\(statuses)")
            #expect(try await app.twofold.users.user(id: userID)?.status == .locked)
            #expect(try await AuditQueries.count(type: "account.locked", on: app) == 1)
        }
    }

    @Test func aTimeStepIsAcceptedOnlyOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let code = try TOTPSteps.code(secret, clock)
            let first = try await TOTPSteps.startLogin(app)
            #expect(try await TOTPSteps.validate(app, flow: first, code: code).0 == 200)
            let second = try await TOTPSteps.startLogin(app)
            let replay = try await TOTPSteps.validate(app, flow: second, code: code)
            #expect(replay.0 == 409)
            #expect(replay.1?.code == "already_used")
            // The previous step's code is older than the used step: refused too.
            #expect(
                try await TOTPSteps.validate(app, flow: second, code: try TOTPSteps.code(secret, clock, offset: -30)).0
                    == 409)
            clock.advance(by: 30)
            #expect(try await TOTPSteps.validate(app, flow: second, code: try TOTPSteps.code(secret, clock)).0 == 200)
        }
    }

    @Test(.tags(.database)) func fiftyParallelSubmissionsOfOneValidCodeGiveOneSuccess() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            var flows: [String] = []
            for index in 0..<50 { flows.append(try await TOTPSteps.startLogin(app, from: "10.1.0.\(index)")) }
            let code = try TOTPSteps.code(secret, clock)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for flow in flows { group.addTask { try await TOTPSteps.validate(app, flow: flow, code: code).0 } }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
        }
    }

    @Test func lockedForFiveMinutesAfterFiveWrongCodesEvenAcrossFlows() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            var flow = try await TOTPSteps.startLogin(app)
            for attempt in 1...4 {
                let result = try await TOTPSteps.validate(app, flow: flow, code: "000000")
                #expect(result.0 == 401)
                #expect(result.1?.code == "invalid_code")
                #expect(result.1?.attemptsRemaining == 5 - attempt)
                // A new login flow does not reset the count (Keycloak #26180).
                flow = try await TOTPSteps.startLogin(app)
            }
            let fifth = try await TOTPSteps.validate(app, flow: flow, code: "000000")
            #expect(fifth.0 == 429)
            #expect(fifth.1?.code == "locked")
            #expect(fifth.1?.lockoutUntil != nil)
            #expect(fifth.1?.retryAfter == 300)
            // Even the right code is refused while locked.
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 429)
            clock.advance(by: 300)
            let fresh = try await TOTPSteps.startLogin(app)  // the old flow expired meanwhile
            #expect(try await TOTPSteps.validate(app, flow: fresh, code: try TOTPSteps.code(secret, clock)).0 == 200)
            #expect(try await AuditQueries.count(type: "lockout", on: app) == 1)
            // The right code after the lock ran out starts the count again.
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try #require(try await sql.raw("SELECT attempts, locked_until FROM factor_guards").first())
            #expect(try row.decode(column: "attempts", as: Int.self) == 0)
            #expect(try row.decodeNil(column: "locked_until"))
        }
    }

    /// The second step reads its flow before its unit of work: a used flow and one past its 5
    /// minutes are still refused, and neither refusal counts as a wrong code.
    @Test func aUsedOrExpiredFlowIsRefusedBeforeTheCode() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let used = try await TOTPSteps.startLogin(app)
            #expect(try await TOTPSteps.validate(app, flow: used, code: try TOTPSteps.code(secret, clock)).0 == 200)
            clock.advance(by: 30)
            let again = try await TOTPSteps.validate(app, flow: used, code: try TOTPSteps.code(secret, clock))
            #expect(again.0 == 409)
            #expect(again.1?.code == "already_used")
            // The flow itself is what is over, and the problem names it (a client tells it from a
            // code used up while the flow goes on).
            #expect(again.1?.errors?["otpFlowId"] != nil)
            let late = try await TOTPSteps.startLogin(app)
            clock.advance(by: 5 * 60)
            let expired = try await TOTPSteps.validate(app, flow: late, code: try TOTPSteps.code(secret, clock))
            #expect(expired.0 == 401)
            #expect(expired.1?.code == "expired")
            #expect(expired.1?.errors?["otpFlowId"] != nil)
            let fresh = try await TOTPSteps.startLogin(app)
            #expect(try await TOTPSteps.validate(app, flow: fresh, code: "000000").1?.attemptsRemaining == 4)
            // A code out of bounds is named as such, counts nothing, and leaves the flow usable.
            let long = try await TOTPSteps.validate(app, flow: fresh, code: String(repeating: "1", count: 65))
            #expect(
                long.0 == 422 && long.1?.errors?["code"] == "must be 1 to 64 characters",
                "\(String(describing: long.1))")
            let empty = try await TOTPSteps.validate(app, flow: fresh, code: "")
            #expect(empty.0 == 422 && empty.1?.errors?["code"] == "is required")
            #expect(try await TOTPSteps.validate(app, flow: fresh, code: "000000").1?.attemptsRemaining == 3)
        }
    }

    /// The verdict is computed before the database work; a replay (right code, step already
    /// used) is refused as used, is no guess (issue S item 11: it neither counts nor starts the
    /// count again).
    @Test func aReplayedCodeIsRefusedWithoutCountingOrResettingTheCount() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let used = try TOTPSteps.code(secret, clock)
            #expect(try await TOTPSteps.validate(app, flow: try await TOTPSteps.startLogin(app), code: used).0 == 200)
            let flow = try await TOTPSteps.startLogin(app)
            for remaining in [4, 3, 2] {
                #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").1?.attemptsRemaining == remaining)
            }
            let replay = try await TOTPSteps.validate(app, flow: flow, code: used)
            #expect(replay.0 == 409 && replay.1?.code == "already_used")
            #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").1?.attemptsRemaining == 1)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: "000000").0 == 429)
        }
    }

    /// A flow that was waiting when its account was locked is refused before its code is judged:
    /// the right code neither claims its time step nor consumes the flow, so both still work once
    /// the account is unlocked.
    @Test func aWaitingFlowOfALockedAccountIsRefusedBeforeItsCode() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let sql = try #require(app.db as? any SQLDatabase)
            try await sql.raw("UPDATE users SET status = 'locked' WHERE id = \(bind: tokens.user.id)").run()
            let code = try TOTPSteps.code(secret, clock)
            let refused = try await TOTPSteps.validate(app, flow: flow, code: code)
            #expect(refused.0 == 403)
            #expect(refused.1?.code == "account_locked")
            try await sql.raw("UPDATE users SET status = 'active' WHERE id = \(bind: tokens.user.id)").run()
            #expect(try await TOTPSteps.validate(app, flow: flow, code: code).0 == 200)
        }
    }

    /// With every attempt slot taken by codes still being checked (and no lock written yet), a
    /// right code is refused as a sixth wrong one would be.
    @Test func aRightCodeIsRefusedWhileEveryAttemptSlotIsTaken() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let sql = try #require(app.db as? any SQLDatabase)
            // Five slots taken by codes still being checked: no lock is written yet.
            try await sql.raw(
                """
                INSERT INTO factor_guards (user_id, factor, attempts, lockouts) VALUES (\(bind: tokens.user.id), 'totp', 5, 0)
                ON CONFLICT (user_id, factor) DO UPDATE SET attempts = 5
                """
            ).run()
            let flow = try await TOTPSteps.startLogin(app)
            let refused = try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock))
            #expect(refused.0 == 429)
            #expect(refused.1?.code == "locked")
            try await sql.raw("UPDATE factor_guards SET attempts = 4").run()
            clock.advance(by: 30)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 200)
            let row = try await sql.raw("SELECT attempts FROM factor_guards").first()
            #expect(try row?.decode(column: "attempts", as: Int.self) == 0)
        }
    }

    /// A right code takes no attempt slot (it was judged before its unit of work, and would give
    /// the slot back at once): a user with no wrong codes to forget gets no guard row written,
    /// and one with wrong codes has the count started again.
    @Test func aRightCodeWritesTheGuardOnlyWhenThereIsACountToForget() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            clock.advance(by: 30)
            let first = try await TOTPSteps.startLogin(app)
            #expect(try await TOTPSteps.validate(app, flow: first, code: try TOTPSteps.code(secret, clock)).0 == 200)
            #expect(try await AuditQueries.count(table: "factor_guards", on: app) == 0)

            let second = try await TOTPSteps.startLogin(app)
            #expect(try await TOTPSteps.validate(app, flow: second, code: "000000").1?.attemptsRemaining == 4)
            clock.advance(by: 30)
            #expect(try await TOTPSteps.validate(app, flow: second, code: try TOTPSteps.code(secret, clock)).0 == 200)
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try #require(try await sql.raw("SELECT attempts, lockouts FROM factor_guards").first())
            #expect(try row.decode(column: "attempts", as: Int.self) == 0)
            #expect(try row.decode(column: "lockouts", as: Int.self) == 0)
        }
    }

    @Test(.tags(.database)) func aHundredParallelWrongCodesEvaluateAtMostFive() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let results = try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        try await TOTPSteps.validate(app, flow: flow, code: String(format: "%06d", 100_000 + index)).0
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            let evaluated = try await AuditQueries.count(table: "factor_failures", on: app)
            #expect(evaluated <= 5, "\(evaluated) codes were checked")
            #expect(results.filter { $0 == 429 }.count >= 95)
        }
    }

    @Test func repeatedLockoutsLengthenAndTwentyInADayLockTheAccount() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            var lockouts: [Int?] = []
            for round in 0..<4 {
                let flow = try await TOTPSteps.startLogin(app)
                var last: (UInt, ProblemBody?) = (0, nil)
                for _ in 0..<5 { last = try await TOTPSteps.validate(app, flow: flow, code: "999999") }
                if round < 3 {
                    #expect(last.0 == 429)
                    lockouts.append(last.1?.retryAfter)
                    clock.advance(by: TimeInterval(last.1?.retryAfter ?? 0))
                } else {
                    #expect(last.0 == 403)
                    #expect(last.1?.code == "account_locked")
                }
            }
            #expect(lockouts == [300, 600, 1200])
            let refused = try await refusal {
                try await app.client(from: "10.0.0.1").send(
                    API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            }
            #expect(refused.status == 403)
            #expect(try await AuditQueries.count(type: "account.locked", on: app) == 1)
        }
    }

    @Test func thePendingSecretExpiresAfterTenMinutes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            let setup = try await client.send(API.TwoFactor.totpSetup, bearer: tokens.accessToken.token)
            clock.advance(by: 601)
            let code = try TOTP(secret: try Base32.decode(setup.secret)).code(at: clock.now)
            // Adding to a password-only account needs the password within 5 minutes.
            let fresh = try await Accounts.stepUpWithPassword(app, token: tokens.accessToken.token)
            let refused = try await refusal {
                try await client.send(API.TwoFactor.totpVerify, CodeRequest(code: code), bearer: fresh)
            }
            #expect(refused.status == 410)
            #expect(refused.code == .expired)
            #expect(try await AuditQueries.count(table: "totp_credentials", on: app) == 0)
        }
    }

    @Test func theSecretIsEncryptedAtRest() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try #require(try await sql.raw("SELECT * FROM totp_credentials").first())
            let stored = try row.decode(column: "secret_ciphertext", as: String.self)
            #expect(!stored.contains(Base32.encode(secret)))
            #expect(!(Data(base64Encoded: stored) ?? Data()).contains(Data(secret)))
            #expect((Data(base64Encoded: stored)?.count ?? 0) == 12 + 20 + 16, "nonce, ciphertext, tag")
        }
    }
}

extension Data {
    func contains(_ other: Data) -> Bool { range(of: other) != nil }
}
