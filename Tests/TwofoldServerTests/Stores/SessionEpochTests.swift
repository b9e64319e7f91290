import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// `SessionEpoch` on the database (SQLite here; PostgreSQL and `sqlite::memory:` in
/// `scripts/test`'s other runs): a sign-in that began before every session of its account was
/// ended (signed out everywhere, a password change, an administrator's reset, a recovery, a lock)
/// starts nothing that counts, however its writes fall around that end.
@Suite(.tags(.database)) struct SessionEpochTests {
    /// A session of `user` as a sign-in that read the account's epoch `epoch` writes it.
    static func session(_ app: Application, _ user: UUID, epoch: Int) async throws -> SessionRecord {
        let now = Date()
        let session = SessionRecord(
            id: UUID(), userID: user, authTime: now, methods: ["pwd"], createdAt: now, lastUsedAt: now,
            ipAddress: "203.0.113.9", userAgent: nil, proofs: [.password: now], epoch: epoch)
        try await SQLSessionStore(database: app.twofold.database).insert(
            session,
            firstRefreshToken: RefreshTokenRecord(
                id: UUID(), sessionID: session.id, tokenHash: "hash-\(session.id)", createdAt: now,
                expiresAt: now.addingTimeInterval(3600)))
        return session
    }

    /// The thief knows the password and holds a code (a phished pair), and their sign-in's
    /// password step passed before the owner signed out everywhere: the second step, sent after,
    /// starts no session. Without the epoch it did, and the owner's sign-out missed it.
    @Test func aSecondStepBegunBeforeEverySessionEndedStartsNone() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let owner = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: owner, clock: clock)
            let thiefs = try await TOTPSteps.startLogin(app, from: "203.0.113.9")
            _ = try await app.client().send(API.Auth.logoutAll, bearer: owner.accessToken.token)

            let (status, problem) = try await TOTPSteps.validate(
                app, flow: thiefs, code: try TOTPSteps.code(secret, clock))
            #expect(status == 401)
            #expect(problem?.code == "expired" && problem?.title == "Sign-in overtaken")
            #expect(problem?.errors?["otpFlowId"] != nil, "the client is told the flow is over")
            let sessions = SQLSessionStore(database: app.twofold.database)
            #expect(try await sessions.liveSessions(userID: owner.user.id).isEmpty)

            // A sign-in begun after the sign-out goes through.
            clock.advance(by: 30)
            _ = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            #expect(try await sessions.liveSessions(userID: owner.user.id).count == 1)
        }
    }

    /// A flow waiting when wrong codes locked the account (a lock ends every session too) is told
    /// the account is locked, not that the flow was overtaken: the person learns why.
    @Test func aFlowOfAnAccountLockedMeanwhileIsToldItIsLocked() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            // As `FactorGuard` locks an account: the lock, then every session ended.
            #expect(try await app.twofold.users.lock(userID: tokens.user.id, now: clock.now))
            _ = try await app.twofold.sessions.revokeAll(userID: tokens.user.id, reason: "account locked")
            let refused = try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock))
            #expect(refused.0 == 403 && refused.1?.code == "account_locked", "\(refused)")
        }
    }

    /// What an overtaken sign-in writes after the end counts for nothing: its session is not
    /// live for a bearer check, a refresh, a step-up, a listing or a factor write, and its
    /// remembered device skips no second step. The session the end kept (a password change keeps
    /// the caller's) stays live until the next end.
    @Test func whatAnOvertakenSignInWritesCountsForNothing() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let database = app.twofold.database
            let (users, sessions) = (SQLUserStore(database: database), SQLSessionStore(database: database))
            let devices = SQLTrustedDeviceStore(database: database)
            let now = Date()
            // The sign-in reads the account before it checks the password.
            let read = try #require(try await users.user(id: alice))
            let caller = try await Self.session(app, alice, epoch: read.sessionEpoch)
            _ = try await sessions.revokeAll(userID: alice, except: caller.id, reason: "password changed", now: now)
            // Then it writes its session and remembered device.
            let late = try await Self.session(app, alice, epoch: read.sessionEpoch)
            func device(_ tag: String, epoch: Int) -> TrustedDeviceRecord {
                TrustedDeviceRecord(
                    id: UUID(), userID: alice, tokenHash: "device-\(tag)", name: tag, createdAt: now,
                    expiresAt: now.addingTimeInterval(3600), epoch: epoch)
            }
            try await devices.insert(device("late", epoch: read.sessionEpoch))

            let stored = try #require(try await sessions.session(id: late.id))
            #expect(stored.revokedAt == nil && stored.superseded && !stored.isLive)
            #expect(try await sessions.session(id: caller.id)?.isLive == true, "the caller's session was kept")
            #expect(try await sessions.liveSessions(userID: alice).map(\.id) == [caller.id])
            #expect(try await sessions.useRefreshToken(hash: "hash-\(late.id)", now: now) == nil)
            #expect(try await !sessions.stepUp(sessionID: late.id, methods: ["pwd"], proofs: [:], now: now))
            await SessionChecks.expectEnded("a passkey by the overtaken session") {
                _ = try await SQLPasskeyStore(database: database).insert(
                    PasskeyRecords.passkey(alice, "LATE"), addedBy: AddingSession(late.id))
            }
            #expect(try await !devices.markUsed(tokenHash: "device-late", userID: alice, now: now))
            #expect(try await devices.live(userID: alice, now: now).isEmpty)

            // A sign-in that reads the account now is not overtaken.
            let current = try #require(try await users.user(id: alice)).sessionEpoch
            #expect(current > read.sessionEpoch)
            let fresh = try await Self.session(app, alice, epoch: current)
            try await devices.insert(device("fresh", epoch: current))
            #expect(try await sessions.session(id: fresh.id)?.isLive == true)
            #expect(try await sessions.useRefreshToken(hash: "hash-\(fresh.id)", now: now) == fresh.id)
            #expect(try await devices.markUsed(tokenHash: "device-fresh", userID: alice, now: now))

            // The next end takes the kept session too.
            _ = try await sessions.revokeAll(userID: alice, except: nil, reason: "signed out everywhere", now: now)
            #expect(try await sessions.liveSessions(userID: alice).isEmpty)
            #expect(try await !devices.markUsed(tokenHash: "device-fresh", userID: alice, now: now))
        }
    }

    /// Four lanes of sign-ins that all read the account before a reset write their sessions as
    /// fast as they can while it runs and after: once it is done, none of them is live. Without
    /// the epoch every session written after the reset's revocation was.
    @Test func signInsRacingAResetLeaveNoLiveSession() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let database = app.twofold.database
            let sessions = SQLSessionStore(database: database)
            let read = try #require(try await SQLUserStore(database: database).user(id: alice)).sessionEpoch
            let reset = ResetFinished()
            let written = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var (afterReset, written) = (0, 0)
                        while afterReset < 10 {
                            try Task.checkCancellation()
                            let done = await reset.done
                            _ = try await Self.session(app, alice, epoch: read)
                            written += 1
                            if done { afterReset += 1 }
                        }
                        return written
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(20))
                    _ = try await sessions.revokeAll(userID: alice, except: nil, reason: "reset", now: Date())
                    await reset.finish()
                    return 0
                }
                return try await group.reduce(0, +)
            }
            let live = try await sessions.liveSessions(userID: alice).count
            #expect(live == 0, "\(live) of the \(written) sessions begun before the reset are live")
        }
    }
}

extension SessionEpochTests {
    /// While an account's factors are reset (`SessionService.reset`), no sign-in starts (a
    /// session or a login flow), a second reset waits, and only the session the reset keeps is
    /// live; after it, sign-ins start again.
    @Test func noSignInStartsWhileTheFactorsAreReset() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let (sessions, users) = (app.twofold.sessions, app.twofold.users)
            let store = SQLSessionStore(database: app.twofold.database)
            let before = try #require(try await users.user(id: alice))
            let kept = try await Self.session(app, alice, epoch: before.sessionEpoch)
            let other = try await Self.session(app, alice, epoch: before.sessionEpoch)
            try await sessions.reset(userID: alice, keeping: kept.id) {
                let during = try #require(try await users.user(id: alice))
                #expect(SessionEpoch.isResetting(during.sessionEpoch))
                for attempt in ["session", "login flow"] {
                    do {
                        if attempt == "session" {
                            _ = try await sessions.start(
                                user: during, methods: ["pwd"], proofs: [.password], origin: .none)
                        } else {
                            _ = try await app.twofold.loginFlows.start(user: during, firstFactor: "pwd", origin: .none)
                        }
                        Issue.record("a \(attempt) started during a reset")
                    } catch let problem as Problem {
                        #expect(problem.status == 409 && problem.title == "Account being changed", "\(problem)")
                    }
                }
                #expect(try await store.session(id: kept.id)?.isLive == true, "the kept session goes on")
                #expect(try await store.session(id: other.id)?.isLive == false)
                #expect(
                    try await !store.openReset(
                        userID: alice, kept: nil, claim: "another", now: .distantPast, until: .distantFuture),
                    "one reset at a time")
            }
            let after = try #require(try await users.user(id: alice))
            #expect(!SessionEpoch.isResetting(after.sessionEpoch) && after.sessionEpoch > before.sessionEpoch)
            #expect(try await store.session(id: kept.id)?.isLive == true)
            _ = try await sessions.start(user: after, methods: ["pwd"], proofs: [.password], origin: .none)
        }
    }

    /// An attacker's lanes sign in as fast as they can (each read of the account, then a
    /// session) and add a passkey with each session, while a reset removes every passkey: none
    /// of the passkeys from a sign-in that began before the reset was done survives it. Without
    /// the refusal of sign-ins during the reset, a sign-in between its start and the removal
    /// added a passkey behind the removal (the attacker review's finding).
    @Test func signInsDuringAResetAddNothingThatSurvivesIt() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let (sessions, users) = (app.twofold.sessions, app.twofold.users)
            let passkeys = SQLPasskeyStore(database: app.twofold.database)
            let reset = ResetFinished()
            let added = try await withThrowingTaskGroup(of: [(String, Int)].self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        var (added, index): ([(String, Int)], Int) = ([], 0)
                        while await !reset.done {
                            try Task.checkCancellation()
                            index += 1
                            let user = try #require(try await users.user(id: alice))
                            guard
                                let session = try? sessions.newSession(
                                    user: user.dto, epoch: user.sessionEpoch, methods: ["pwd"],
                                    proofs: [.password], origin: .none)
                            else {
                                try await Task.sleep(for: .milliseconds(1))
                                continue
                            }
                            _ = try await sessions.record(session)
                            let id = "L\(lane)-\(index)"
                            do {
                                if try await passkeys.insert(
                                    PasskeyRecords.passkey(alice, id),
                                    addedBy: AddingSession(session.record.id))
                                {
                                    added.append((id, user.sessionEpoch))
                                    await reset.count()
                                }
                            } catch let problem as Problem where problem.status == 401 {}
                        }
                        return added
                    }
                }
                group.addTask {
                    // Once the lanes are under way (a passkey from each, about).
                    while await reset.added < 4 { try await Task.sleep(for: .milliseconds(5)) }
                    try await sessions.reset(userID: alice) {
                        _ = try await sessions.revokeAll(userID: alice, reason: "reset")
                        try await Task.sleep(for: .milliseconds(20))
                        for passkey in try await passkeys.credentials(userID: alice) {
                            _ = try await passkeys.delete(passkey.credentialID, userID: alice)
                        }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    await reset.finish()
                    return []
                }
                return try await group.reduce([], +)
            }
            let final = try #require(try await users.user(id: alice)).sessionEpoch
            let begunBefore = Set(added.filter { $0.1 < final }.map(\.0))
            #expect(!begunBefore.isEmpty, "the lanes added passkeys before the reset")
            let left = try await passkeys.credentials(userID: alice).map(\.credentialID).filter(begunBefore.contains)
            #expect(left.isEmpty, "\(left.count) passkeys from sign-ins begun before the reset's end survived it")
        }
    }
}

extension SessionEpochTests {
    /// A reset cut short (its server stopped with the count odd) is closed by housekeeping once
    /// its claim runs out, and audited; a reset that outlived its claim and was taken over leaves
    /// the closing to the one that took it.
    @Test func aResetCutShortIsClosedAndATakenClaimIsNotClosedByItsFormerHolder() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let alice = try await Accounts.signUp(app, "alice").user.id
            let store = SQLSessionStore(database: app.twofold.database)
            let users = app.twofold.users
            func epoch() async throws -> Int { try #require(try await users.user(id: alice)).sessionEpoch }
            let claimTime = SessionService.resetClaim
            #expect(
                try await store.openReset(
                    userID: alice, kept: nil, claim: "first", now: clock.now,
                    until: clock.now.addingTimeInterval(claimTime)))
            // The server stops here. Within the claim, nothing closes it; after, housekeeping does.
            try await app.twofold.housekeeping.sweep(now: clock.now.addingTimeInterval(claimTime - 1))
            #expect(SessionEpoch.isResetting(try await epoch()))
            clock.advance(by: claimTime)
            try await app.twofold.housekeeping.sweep(now: clock.now)
            #expect(!SessionEpoch.isResetting(try await epoch()), "sign-ins start again")
            #expect(try await AuditQueries.count(type: "account.reset_interrupted", on: app) == 1)
            _ = try await app.twofold.sessions.start(
                user: try #require(try await users.user(id: alice)), methods: ["pwd"], proofs: [.password],
                origin: .none)

            // A reset that outlives its claim is taken over; its own closing then changes nothing.
            #expect(
                try await store.openReset(
                    userID: alice, kept: nil, claim: "slow", now: clock.now,
                    until: clock.now.addingTimeInterval(claimTime)))
            clock.advance(by: claimTime + 1)
            #expect(
                try await store.openReset(
                    userID: alice, kept: nil, claim: "taker", now: clock.now,
                    until: clock.now.addingTimeInterval(claimTime)))
            try await store.closeReset(userID: alice, kept: nil, claim: "slow")
            #expect(SessionEpoch.isResetting(try await epoch()), "the taker is still removing")
            try await store.closeReset(userID: alice, kept: nil, claim: "taker")
            #expect(!SessionEpoch.isResetting(try await epoch()))
        }
    }

    /// An SMS sign-in code asked for before an administrator's reset (which removes the SMS
    /// device and unproves the number) signs nobody in after it (the second attacker review's
    /// finding: it started a live session).
    @Test func anSMSSignInCodeSentBeforeAResetSignsNobodyInAfterIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await Administrators.adminTokens(app)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            try await Accounts.verifyPhone(app, token: bob.accessToken.token, clock: clock)
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "bob", "method": "smsOTP", "deviceId": "old-phone"],
                token: bob.accessToken.token)
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            _ = try await Codes.deliverAll(app, clock: clock)
            clock.advance(by: 61)
            let sent = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "bob"], from: "10.0.0.2")
            #expect(sent.0 == 200, "\(sent.1)")
            let code = try #require(try await Codes.deliver(app, clock: clock).last).1

            let reset = try await DeviceKeySteps.post(
                app, API.Admin.resetMFA.path("\(bob.user.id)"), [:], token: admin.accessToken.token)
            #expect(reset.0 == 200, "\(reset.1)")
            let late = try await DeviceKeySteps.post(
                app, API.DeviceKeys.verifyOTP.path(), ["username": "bob", "otp": code], from: "10.0.0.2")
            #expect(late.0 == 401, "\(late.1)")
            #expect(try await app.twofold.sessions.list(userID: bob.user.id, current: nil).isEmpty)
        }
    }
}

/// Whether the reset finished, as the racing lanes read it.
private actor ResetFinished {
    private(set) var done = false
    private(set) var added = 0
    func finish() { done = true }
    func count() { added += 1 }
}
