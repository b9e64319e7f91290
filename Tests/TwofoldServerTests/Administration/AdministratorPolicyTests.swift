import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldSQLite
import VaporTesting

@testable import TwofoldServer

/// Administrators under the sign-in policy (issue V item 5): no console and no admin endpoint
/// without a second factor of their own, proven by the session; an unlock is under the policy as
/// a reset is (a stale administrator session clears no wrong-code lock), and lifts no recovery's
/// hold.
@Suite struct AdministratorPolicyTests {
    /// What an administrator asks of the API with `token`: each admin endpoint's status and
    /// the step-up it names.
    static func adminCalls(_ app: Application, token: String, on user: UUID) async throws -> [(Int, String?)] {
        let client = app.client()
        var answers: [(Int, String?)] = []
        let calls: [() async throws -> Void] = [
            { _ = try await client.send(API.Admin.users, bearer: token) },
            { _ = try await client.send(API.Admin.user, "\(user)", bearer: token) },
            { _ = try await client.send(API.Admin.audit, bearer: token) },
            { _ = try await client.send(API.Admin.recoveryRequests, bearer: token) },
            { _ = try await client.send(API.Admin.unlock, "\(user)", bearer: token) },
            { _ = try await client.send(API.Admin.resetMFA, "\(user)", bearer: token) },
        ]
        for call in calls {
            do {
                try await call()
                answers.append((200, nil))
            } catch let refused as APIError {
                answers.append((refused.status, refused.problem?.errors?["stepUp"]))
            }
        }
        return answers
    }

    /// `.administer` as the policy decides it, cell by cell: the administrator's own second
    /// factor, proven in the window — never the password, however recent, and never a code by
    /// email.
    @Test func administeringAsksTheAdministratorsOwnRecentSecondFactor() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let secret = UUID()
        let withApp = SignInCredentials(totpSecret: secret, email: "ada@example.com")
        let emailOnly = SignInCredentials(emailCodes: true, backupCodes: 10, email: "ada@example.com")
        let passwordOnly = SignInCredentials(email: "ada@example.com")
        func decide(_ account: SignInCredentials, _ proofs: [Proof: Date]) -> SignInDecision {
            SignInPolicy.decide(
                .administer, proof: SessionProof(proofs: proofs), account: account, now: now, window: 300)
        }
        let recent = now.addingTimeInterval(-60)
        let stale = now.addingTimeInterval(-360)
        #expect(decide(passwordOnly, [.password: recent]) == .stepUp(.administratorFactor))
        #expect(
            decide(emailOnly, [.password: recent, .code(.email, to: "ada@example.com"): recent])
                == .stepUp(.administratorFactor))
        #expect(decide(withApp, [.password: recent]) == .stepUp(.recentSecondFactor))
        #expect(decide(withApp, [.password: stale, .totp(secretID: secret): stale]) == .stepUp(.recentSecondFactor))
        #expect(decide(withApp, [.password: stale, .totp(secretID: secret): recent]) == .allowed)
        // An app since replaced proves nothing.
        #expect(decide(withApp, [.totp(secretID: UUID()): recent]) == .stepUp(.recentSecondFactor))
        #expect(SignInCredentials(emailCodes: true).administratorFactorKinds.isEmpty)
        #expect(SignInCredentials(emailCodes: true, backupCodes: 10).administratorFactorKinds.isEmpty)
        #expect(SignInCredentials(totpSecret: secret, emailCodes: true).administratorFactorKinds == [.totp])
    }

    /// The review's bypass: on an administrator's account the mailbox vouches for no change to
    /// how it signs in. With the password and an email code, a phished administrator was able
    /// to enrol a device key of the attacker's (then sign in with it alone) or remove the app and
    /// add one of the attacker's. A user's account keeps the email way to remove a factor.
    @Test func theMailboxChangesNothingOnAnAdministratorsAccount() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let recent = now.addingTimeInterval(-60)
        var account = SignInCredentials(totpSecret: UUID(), emailCodes: true, backupCodes: 10, email: "ada@example.com")
        let proofs: [Proof: Date] = [.password: recent, .code(.email, to: "ada@example.com"): recent]
        func decide(_ change: SignInChange) -> SignInDecision {
            SignInPolicy.decide(change, proof: SessionProof(proofs: proofs), account: account, now: now, window: 300)
        }
        #expect(decide(.add(kind: .deviceKey)) == .allowed, "a user's account: email is one of its factors")
        #expect(decide(.remove(proof: "totp")) == .allowed, "a user's: the password and a code to the mailbox")
        account.administrator = true
        #expect(decide(.add(kind: .deviceKey)) == .stepUp(.recentSecondFactor))
        #expect(decide(.add(kind: .totp)) == .stepUp(.recentSecondFactor))
        #expect(decide(.changeDestination(.email)) == .stepUp(.recentSecondFactor))
        #expect(decide(.remove(proof: "totp")) == .stepUp(.otherProof))
        #expect(decide(.remove(proof: "email")) == .stepUp(.otherProof))

        // Nor a code to the phone, for a key's downgrade, unless SMS is the administrator's factor.
        let phone = "+14155550123"
        var withKey = SignInCredentials(
            deviceKeys: ["phone-1": "key"], emailCodes: true, phone: phone, email: "ada@example.com")
        let bySMS: [Proof: Date] = [.password: recent, .code(.sms, to: phone): recent]
        let downgrade = SignInChange.downgrade(proof: FactorChanges.factorName(method: .deviceKey, deviceID: "phone-1"))
        func decideWithKey() -> SignInDecision {
            SignInPolicy.decide(downgrade, proof: SessionProof(proofs: bySMS), account: withKey, now: now, window: 300)
        }
        #expect(decideWithKey() == .allowed, "a user's account: seed 004 scenario 8")
        withKey.administrator = true
        #expect(decideWithKey() == .stepUp(.otherProof))
    }

    /// A recovery is another person's review: an administrator cannot approve a request for
    /// their own account (their password and mailbox in a stranger's hands would do it), and
    /// another administrator can.
    @Test func anAdministratorsOwnRecoveryWaitsForAnother() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let alice = try await Administrators.adminTokens(app)
            _ = try await RecoverySteps.messages(app, clock: clock, to: "alice@example.com")
            let (status, started, _) = try await RecoverySteps.start(app, "alice@example.com")
            #expect(status == .accepted)
            let id = try #require(started).recoveryId
            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "alice@example.com").first)
            let (proven, _) = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(id)"), ["code": try RecoverySteps.code(in: mail)])
            #expect(proven == .ok)
            for path in [API.Admin.approveRecovery.path("\(id)"), API.Admin.denyRecovery.path("\(id)")] {
                let (refused, body) = try await RecoverySteps.post(
                    app, path, ["note": "It is me."], headers: .bearer(alice.accessToken.token))
                #expect(refused == .forbidden, "\(body)")
            }
            // Another administrator decides it.
            _ = try await Accounts.signUp(app, "carol", address: "10.0.0.3")
            try await app.twofold.database.run(Statement("UPDATE users SET role = 'admin' WHERE username = 'carol'"))
            let carolID = try #require(try await app.twofold.users.named("carol")).id
            _ = try await app.twofold.totp.enableForNewAccount(userID: carolID, account: "carol@example.com")
            let carol = try await Administrators.signIn(app, "carol")
            #expect(try await RecoverySteps.approve(app, id, admin: carol) == .ok)
        }
    }

    /// The hole: an administrator made by `admin create` had no second factor, and the password
    /// alone reset any user's factors. Now the password, however recent, opens nothing.
    @Test func anAdministratorWithoutASecondFactorAdministersNothing() async throws {
        try await withTestApp { app in
            let alice = try await Accounts.signUp(app, "alice")
            try await app.twofold.database.run(Statement("UPDATE users SET role = 'admin' WHERE username = 'alice'"))
            let bob = try await Accounts.signUp(app, "bob")
            let stepped = try await Accounts.stepUpWithPassword(app, token: alice.accessToken.token)
            for (status, need) in try await Self.adminCalls(app, token: stepped, on: bob.user.id) {
                #expect(status == 403 && need == "administratorFactor", "\(status) \(need ?? "-")")
            }
            // Nor another account's devices (`GET /devices/{username}` reads as an administrator).
            #expect(
                try await refusal { try await app.client().send(API.DeviceKeys.devices, "bob", bearer: stepped) }
                    .status == 403)
            // The console says what to do, with the way to do it.
            let browser = TestBrowser(app)
            _ = try await browser.signIn("alice")
            let console = try await browser.get("/admin")
            #expect(console.status == .forbidden)
            #expect(console.body.contains("Set up a second factor first") && console.body.contains("/account/security"))
            #expect(
                try await browser.post("/admin/users/\(bob.user.id)/reset-mfa", ["csrf": console.csrf ?? ""]).status
                    == .forbidden)
            #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .active)
        }
    }

    /// A second factor counts once the session proved it: the session that added the app (it
    /// proved the password only) reads nothing; a sign-in with the app does. Codes by email are
    /// no administrator's factor (the mailbox comes with a phished password).
    @Test func theConsoleOpensToASessionThatProvedTheAdministratorsFactor() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let alice = try await Accounts.signUp(app, "alice")
            try await app.twofold.database.run(Statement("UPDATE users SET role = 'admin' WHERE username = 'alice'"))
            let bob = try await Accounts.signUp(app, "bob")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: alice, clock: clock)
            for (status, need) in try await Self.adminCalls(app, token: alice.accessToken.token, on: bob.user.id) {
                #expect(status == 403 && need == "recentSecondFactor", "\(status) \(need ?? "-")")
            }
            let later = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            let client = app.client()
            let reads: [(String, () async throws -> Void)] = [
                (API.Admin.users.path(), { _ = try await client.send(API.Admin.users, bearer: later) }),
                (API.Admin.audit.path(), { _ = try await client.send(API.Admin.audit, bearer: later) }),
                (
                    API.Admin.user.path("\(bob.user.id)"),
                    { _ = try await client.send(API.Admin.user, "\(bob.user.id)", bearer: later) }
                ),
            ]
            for (path, read) in reads {
                #expect(try await status(read) == 200, "\(path)")
            }
            // In the console, a session that proved the password only is asked for the app, and
            // the step-up brings it back to the console.
            let browser = TestBrowser(app)
            let secondStep = try await browser.signIn("alice")
            #expect(secondStep.body.contains("name=\"flow\""), "the password alone does not sign alice in")
            #expect(try await TestBrowser(app).get("/admin").status == .seeOther, "no session: the sign-in page")
            clock.advance(by: 30)
            _ = try await browser.secondStep(secondStep, method: "totp", code: try TOTPSteps.code(secret, clock))
            #expect(try await browser.get("/admin").status == .ok)
        }
    }

    static func unlock(_ app: Application, _ userID: UUID, token: String) async throws -> (Int, ErrorCode?) {
        do {
            _ = try await app.client().send(API.Admin.unlock, "\(userID)", bearer: token)
            return (200, nil)
        } catch let refused as APIError {
            return (refused.status, refused.code)
        }
    }

    /// The finding: an administrator session refused a reset (403) still cleared a user's
    /// wrong-code locks, unlimited guessing for whoever has that user's password.
    @Test func aStaleAdministratorSessionClearsNoLock() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await Administrators.adminTokens(app)
            clock.advance(by: 6 * 60)  // the administrator's password is no longer recent
            let bob = try await Accounts.signUp(app, "bob")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            let flow = try await TOTPSteps.startLogin(app, "bob")
            for _ in 0..<5 { _ = try await TOTPSteps.validate(app, flow: flow, code: "000000") }
            clock.advance(by: 60)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 429)
            let refused = try await Self.unlock(app, bob.user.id, token: admin.accessToken.token)
            #expect(refused.0 == 403 && refused.1 == .stepUpRequired, "\(refused)")
            #expect(
                try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock, offset: 30)).0
                    == 429, "still locked")
            let stepped = try await Administrators.stepUp(app, token: admin.accessToken.token)
            #expect(try await Self.unlock(app, bob.user.id, token: stepped).0 == 200)
            clock.advance(by: 30)
            #expect(try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock)).0 == 200)
        }
    }

    /// Unlocking a recovered account does not let the password alone in before the recovered
    /// session has set up a factor: only a reset lifts the hold.
    @Test func unlockingLiftsNoRecoveryHold() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, _, _) = try await RecoverySteps.recovered(app, clock: clock)
            let admin = try await Administrators.stepUp(
                app, token: try await Administrators.signIn(app, "alice").accessToken.token)
            #expect(try await Self.unlock(app, bob.user.id, token: admin).0 == 200)
            let refused = try await refusal {
                try await app.client(from: "10.0.0.9").send(
                    API.Auth.login, LoginRequest(username: "bob", password: Accounts.password))
            }
            #expect(refused.status == 403)
            #expect(refused.code == .factorSetupRequired)
        }
    }
}
