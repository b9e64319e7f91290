import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldSQLite
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// Account recovery with manual review (`AccountRecovery`), and the administrators' reset, over
/// HTTP as an attacker and as the owner would use them.
@Suite struct RecoveryTests {
    @Test func aReviewedRecoverySignsInOnceAndAsksForAFactorFirst() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (bob, id, _) = try await RecoverySteps.pendingReview(
                app, clock: clock, message: "<script>alert(1)</script>",
                document: ["contentType": "image/png", "data": RecoverySteps.png.base64EncodedString()])

            // The queue shows the request, its message as typed and its document.
            let client = app.client()
            let queue = try await client.send(API.Admin.recoveryRequests, bearer: admin.accessToken.token).requests
            #expect(queue.map(\.id) == [id])
            #expect(queue.first?.message == "<script>alert(1)</script>")
            #expect(queue.first?.username == "bob")
            #expect(queue.first?.state == .pendingReview)
            #expect(queue.first?.documentBytes == RecoverySteps.png.count)
            try await app.raw(
                .GET, API.Admin.recoveryDocument.path("\(id)"), headers: .bearer(admin.accessToken.token)
            ) { response in
                #expect(response.status == .ok)
                #expect(Data(buffer: response.body) == RecoverySteps.png)
                #expect(response.headers.first(name: "Content-Type") == "image/png")
                #expect(response.headers.first(name: "Content-Disposition") == "attachment")
            }
            #expect(
                try await AuditQueries.count(type: "recovery.document_viewed", on: app) == 1,
                "opening someone's identity document is audited")

            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            // The document is gone with the decision; the pass went to bob's address.
            try await app.raw(
                .GET, API.Admin.recoveryDocument.path("\(id)"), headers: .bearer(admin.accessToken.token)
            ) { response in #expect(response.status == .notFound) }
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            #expect(mail.body.contains("/\(Pages.recoveryCancel.path)?token="))

            let starter = app.client(from: "10.9.0.1")
            let recovered = try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
                .accessToken.token

            // bob's old session is over, his authenticator app gone.
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: bob.accessToken.token) }.status
                    == 401)
            let factors = try await client.send(API.TwoFactor.status, bearer: recovered)
            #expect(factors.isEnabled == false)
            // Before a factor, nothing else: not even the primary method or the password.
            let gated = try await refusal {
                try await client.send(
                    API.Account.changePassword,
                    PasswordChangeRequest(currentPassword: Accounts.password, newPassword: "another long password 1"),
                    bearer: recovered)
            }
            #expect(gated.status == 403)
            #expect(gated.code == .factorSetupRequired)
            // The pass works once.
            let again = try await refusal {
                try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
            }
            #expect(again.status == 409)
            #expect(again.code == .alreadyUsed)
            // Setting up an authenticator app is allowed, and lifts the gate.
            let fresh = AuthTokensResponse(
                accessToken: TokenDTO(token: recovered, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now),
                user: bob.user)
            _ = try await TOTPSteps.enable(app, tokens: fresh, clock: clock)
            _ = try await client.send(API.Auth.sessions, bearer: recovered)
            _ = try await client.send(API.TwoFactor.trustedDevices, bearer: recovered)
            let events = try await app.twofold.audit.events(userID: bob.user.id).map(\.type)
            for event in [
                "recovery.started", "recovery.email_proven", "recovery.approved", "account.factors_reset",
                "recovery.completed",
            ] {
                #expect(events.contains(event), "\(event)")
            }
        }
    }

    @Test func anUnknownAddressIsAnsweredLikeAKnownOne() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app, "bob")
            _ = try await Codes.deliverAll(app, clock: clock)
            let (knownStatus, known, _) = try await RecoverySteps.start(app, "bob@example.com")
            let (unknownStatus, unknown, _) = try await RecoverySteps.start(app, "nobody@example.com")
            #expect(knownStatus == .accepted && unknownStatus == .accepted)
            #expect(known?.state == .pendingEmail && unknown?.state == .pendingEmail)
            #expect(known?.expiresAt == unknown?.expiresAt)
            let delivered = try await Codes.deliverAll(app, clock: clock)
            #expect(delivered.map(\.destination) == ["bob@example.com"])
            // A wrong code is answered alike too.
            let starter = app.client(from: "10.9.0.1")
            for started in [known, unknown] {
                let id = "\(try #require(started).recoveryId)"
                let refused = try await refusal {
                    try await starter.send(API.Recovery.verifyEmail, id, CodeRequest(code: "000000"))
                }
                #expect(refused.status == 401)
                #expect(refused.code == .invalidCode && refused.attemptsRemaining == 4)
            }
            // The request for no account never leaves its first step, whatever is tried.
            let unknownID = "\(try #require(unknown).recoveryId)"
            for guess in ["111111", "222222", "333333", "444444"] {
                _ = try await status {
                    try await starter.send(API.Recovery.verifyEmail, unknownID, CodeRequest(code: guess))
                }
            }
            let tooMany = try await refusal {
                try await starter.send(API.Recovery.verifyEmail, unknownID, CodeRequest(code: "555555"))
            }
            #expect(tooMany.status == 401)
            #expect(tooMany.attemptsRemaining == 0)
        }
    }

    @Test func approvalNeedsTheEmailStepAndAFreshAdminStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            _ = try await Accounts.signUp(app, "bob")
            let (_, started, _) = try await RecoverySteps.start(app, "bob@example.com")
            let id = try #require(started).recoveryId
            // Not proven yet: refused, and not in the queue.
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .conflict)
            let client = app.client()
            let queue = try await client.send(API.Admin.recoveryRequests, bearer: admin.accessToken.token)
            #expect(queue.requests.isEmpty)

            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first)
            _ = try await app.client(from: "10.9.0.1").send(
                API.Recovery.verifyEmail, "\(id)", CodeRequest(code: try RecoverySteps.code(in: mail)))
            // The administrator's password is no longer recent: step up first.
            clock.advance(by: 6 * 60)
            let stale = try await refusal {
                try await client.send(
                    API.Admin.approveRecovery, "\(id)", RecoveryDecisionRequest(note: "ok"),
                    bearer: admin.accessToken.token)
            }
            #expect(stale.status == 403)
            #expect(stale.code == .stepUpRequired)
            // A non-admin is refused whatever they proved.
            let mallory = try await Accounts.signUp(app, "mallory")
            for endpoint in [API.Admin.approveRecovery, API.Admin.denyRecovery] {
                let refused = try await refusal {
                    try await client.send(
                        endpoint, "\(id)", RecoveryDecisionRequest(note: "ok"), bearer: mallory.accessToken.token)
                }
                #expect(refused.status == 403, "\(endpoint)")
            }
            let stepped = try await Administrators.stepUp(app, token: admin.accessToken.token)
            let empty = try await refusal {
                try await client.send(
                    API.Admin.denyRecovery, "\(id)", RecoveryDecisionRequest(note: "  "), bearer: stepped)
            }
            #expect(empty.status == 422)
            let denied = try await client.send(
                API.Admin.denyRecovery, "\(id)", RecoveryDecisionRequest(note: "The ID does not match."),
                bearer: stepped)
            #expect(denied.state == .denied)
            // Decided once: a second decision is refused.
            let twice = try await refusal {
                try await client.send(
                    API.Admin.approveRecovery, "\(id)", RecoveryDecisionRequest(note: "changed my mind"),
                    bearer: stepped)
            }
            #expect(twice.status == 409)
            let notices = try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com")
            #expect(notices.contains { $0.subject.contains("denied") })
        }
    }

    @Test func thePassWaitsItsPeriodAndExpires() async throws {
        let clock = TestClock()
        try await withTestApp(
            clock: clock,
            adjust: {
                $0.rules.recoveryWait = 3600
                $0.rules.recoveryPassLifetime = 600
            }
        ) { app in
            let admin = try await RecoverySteps.admin(app)
            let (_, id, _) = try await RecoverySteps.pendingReview(app, clock: clock)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            let starter = app.client(from: "10.9.0.1")
            let early = try await refusal {
                try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
            }
            #expect(early.status == 403)
            #expect(early.code == .notYetValid && early.problem?.retryAfter == 3600)
            let waiting = try await app.client().send(API.Recovery.status, "\(id)")
            #expect(waiting.state == .approved && waiting.usableFrom == clock.now.addingTimeInterval(3600))
            clock.advance(by: 3600 + 601)
            let late = try await refusal {
                try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
            }
            #expect(late.status == 401)
            #expect(late.code == .expired)
            let wrong = try await refusal {
                try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: "not-a-pass"))
            }
            #expect(wrong.status == 401)
        }
    }

    @Test func thisWasntMeCancelsAndAfterTheFactLocksTheAccount() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (bob, id, cancel) = try await RecoverySteps.pendingReview(app, clock: clock)
            let owner = app.client(from: "10.9.0.1")
            let cancelled = try await owner.send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            #expect(cancelled.state == .cancelled)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .conflict)
            let bad = try await refusal {
                try await owner.send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel + "x"))
            }
            #expect(bad.status == 404)

            // A second request goes through; "this wasn't me" afterwards locks the account.
            clock.advance(by: 60)
            let (_, second, _) = try await RecoverySteps.start(app, "bob@example.com")
            let secondID = try #require(second).recoveryId
            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").last)
            _ = try await status {
                try await owner.send(
                    API.Recovery.verifyEmail, "\(secondID)", CodeRequest(code: try RecoverySteps.code(in: mail)))
            }
            #expect(try await RecoverySteps.approve(app, secondID, admin: admin) == .ok)
            let approved = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            _ = try await owner.send(
                API.Recovery.redeem,
                RecoveryRedeemRequest(pass: try RecoverySteps.token(of: Pages.recoveryPass, in: approved)))
            _ = try await owner.send(
                API.Recovery.cancel,
                RecoveryCancelRequest(token: try RecoverySteps.token(of: Pages.recoveryCancel, in: approved)))
            #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .locked)
            // Ten days on, the link no longer works.
            clock.advance(by: 10 * 86_400)
            let old = try await refusal {
                try await owner.send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            }
            #expect(old.status == 401)
        }
    }

    @Test(.tags(.database)) func parallelRedeemsSignInOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (_, id, _) = try await RecoverySteps.pendingReview(app, clock: clock)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            let starter = app.client(from: "10.9.0.1")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await status {
                            try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 7)
        }
    }

    @Test func badInputIsRefusedAndStoresNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app, "bob")
            _ = try await Codes.deliverAll(app, clock: clock)
            let jpegAsPNG = ["contentType": "image/png", "data": Data([0xFF, 0xD8, 0xFF, 0xE0]).base64EncodedString()]
            let cases: [(String, [String: String]?, String)] = [
                ("hi", jpegAsPNG, "document"),
                ("hi", ["contentType": "text/html", "data": "PGgxPg=="], "document"),
                ("hi", ["contentType": "image/png", "data": "%%%"], "document"),
                ("a\u{202E}b", nil, "message"),
                (String(repeating: "x", count: 2001), nil, "message"),
            ]
            for (message, document, field) in cases {
                let (status, _, problem) = try await RecoverySteps.start(
                    app, "bob@example.com", message: message, document: document)
                #expect(status == .unprocessableEntity)
                #expect(problem?.errors?[field] != nil, "\(field)")
            }
            let (badEmail, _, _) = try await RecoverySteps.start(app, "not an address")
            #expect(badEmail == .unprocessableEntity)
            #expect(try await Codes.deliverAll(app, clock: clock).isEmpty)
            let stored = try await app.twofold.database.count(Statement("SELECT id FROM recovery_requests"))
            #expect(stored == 0)
        }
    }

    @Test func startsAreLimitedPerAddressAndPerAccount() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, "bob")
            for index in 0..<3 {
                let (status, _, _) = try await RecoverySteps.start(app, "bob@example.com", from: "10.9.1.\(index)")
                #expect(status == .accepted)
            }
            let (perAccount, _, problem) = try await RecoverySteps.start(app, "bob@example.com", from: "10.9.1.9")
            #expect(perAccount == .tooManyRequests && problem?.retryAfter != nil)
            // An unknown address has the same budget.
            for index in 0..<3 { _ = try await RecoverySteps.start(app, "ghost@example.com", from: "10.9.2.\(index)") }
            let (ghost, _, _) = try await RecoverySteps.start(app, "ghost@example.com", from: "10.9.2.9")
            #expect(ghost == .tooManyRequests)
            for index in 0..<5 { _ = try await RecoverySteps.start(app, "p\(index)@example.com", from: "10.9.3.1") }
            let (perAddress, _, _) = try await RecoverySteps.start(app, "p9@example.com", from: "10.9.3.1")
            #expect(perAddress == .tooManyRequests)
        }
    }

    @Test func anAdminResetRemovesEveryFactorAfterAStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let bob = try await Accounts.signUp(app, "bob")
            _ = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            _ = try await Codes.deliverAll(app, clock: clock)
            let client = app.client()
            let bobID = "\(bob.user.id)"
            let bobTries = try await refusal {
                try await client.send(API.Admin.resetMFA, bobID, bearer: bob.accessToken.token)
            }
            #expect(bobTries.status == 403)
            clock.advance(by: 6 * 60)
            let stale = try await refusal {
                try await client.send(API.Admin.resetMFA, bobID, bearer: admin.accessToken.token)
            }
            #expect(stale.status == 403)
            let stepped = try await Administrators.stepUp(app, token: admin.accessToken.token)
            _ = try await client.send(API.Admin.resetMFA, bobID, bearer: stepped)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: bob.accessToken.token) }.status
                    == 401)
            // bob signs in with the password alone now, and was told.
            let outcome = try await client.send(
                API.Auth.login, LoginRequest(username: "bob", password: Accounts.password))
            guard case .signedIn(let tokens) = outcome else { throw ClientAccounts.SecondStepAsked(name: "bob") }
            #expect(tokens.user.username == "bob")
            let notices = try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com")
            #expect(notices.contains { $0.subject.contains("reset") })
            let events = try await app.twofold.audit.events(userID: bob.user.id)
            #expect(events.contains { $0.type == "account.factors_reset" && $0.actorId == admin.user.id })
        }
    }

    @Test func disowningARecoveryRemovesWhatItAddedAndTheReviewerIsWarned() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, session, cancel) = try await RecoverySteps.recovered(app, clock: clock)
            // Whoever recovered adds an authenticator app, a while later (the recovery proof
            // vouches for a first factor however old it is).
            clock.advance(by: 10 * 60)
            let fresh = AuthTokensResponse(
                accessToken: TokenDTO(token: session, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now), user: bob.user)
            _ = try await TOTPSteps.enable(app, tokens: fresh, clock: clock)
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 1)
            // The owner says it was not them: the app goes, the account locks, sessions end.
            let owner = app.client(from: "10.9.0.1")
            _ = try await owner.send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 0)
            #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .locked)
            #expect(try await app.twofold.sessions.list(userID: bob.user.id, current: nil).isEmpty)
            // A new request for the account shows its reviewer the lock and the disowned one.
            clock.advance(by: 60)
            let (_, started, _) = try await RecoverySteps.start(app, "bob@example.com")
            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").last)
            let startedID = "\(try #require(started).recoveryId)"
            _ = try await status {
                try await owner.send(
                    API.Recovery.verifyEmail, startedID, CodeRequest(code: try RecoverySteps.code(in: mail)))
            }
            let queued = try #require(try await app.twofold.recovery.queue(PageQuery()).requests.first)
            #expect(queued.accountStatus == "locked" && queued.disownedRecoveries == 1)
        }
    }

    @Test func thePasswordAloneWaitsWhileTheRecoveredSessionSetsUpAFactor() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, session, _) = try await RecoverySteps.recovered(app, clock: clock)
            // Someone with bob's password races him: refused, for the hold's seven days.
            let other = app.client(from: "10.0.0.9")
            let login = LoginRequest(username: "bob", password: Accounts.password)
            let held = try await refusal { try await other.send(API.Auth.login, login) }
            #expect(held.status == 403)
            #expect(held.code == .factorSetupRequired)
            // bob's recovered session sets up the app; then the password asks for it as usual.
            let fresh = AuthTokensResponse(
                accessToken: TokenDTO(token: session, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now), user: bob.user)
            _ = try await TOTPSteps.enable(app, tokens: fresh, clock: clock)
            let outcome = try await other.send(API.Auth.login, login)
            guard case .secondStep = outcome else {
                Issue.record("expected a second step")
                return
            }
        }
    }

    /// A browser the recovery pass signed in may only set up a factor, through the pages' script
    /// calls too: adding a passkey is open to it, a passkey step-up is not (as the API's gate).
    @Test func aRecoveredBrowserSessionMaySetUpAPasskeyAndNothingElseByScript() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (_, id, _) = try await RecoverySteps.pendingReview(app, clock: clock)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            let browser = TestBrowser(app)
            let form = try await browser.get("/recovery/pass?token=\(pass)")
            let signedIn = try await browser.post("/recovery/pass", ["csrf": form.csrf ?? "", "token": pass])
            #expect(signedIn.status == .seeOther)
            let page = try await browser.get("/account/security")
            #expect(page.body.contains("Set up a sign-in method first"))
            let csrf: HTTPHeaders = [Wire.Header.csrfToken: page.csrf ?? ""]
            let stepUp = try await browser.postJSON(API.Auth.stepUpPasskeyOptions.href(), extra: csrf)
            #expect(stepUp.status == .forbidden && stepUp.body.contains("factor_setup_required"), "\(stepUp.body)")
            let add = try await browser.postJSON(API.Passkeys.registerOptions.href(), extra: csrf)
            #expect(add.status == .ok, "\(add.body)")
        }
    }

    @Test(.tags(.database)) func aCancelRacingTheRedeemNeverLeavesASession() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (bob, id, cancel) = try await RecoverySteps.pendingReview(app, clock: clock)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            let starter = app.client(from: "10.9.0.1")
            async let redeemed = status {
                try await starter.send(API.Recovery.redeem, RecoveryRedeemRequest(pass: pass))
            }
            async let cancelled = status {
                try await starter.send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            }
            let (redeem, cancelAnswer) = try await (redeemed, cancelled)
            #expect(cancelAnswer == 200)
            let state = try #require(try await app.twofold.recovery.status(id)).state
            let left = try await app.twofold.sessions.list(userID: bob.user.id, current: nil)
            if state == .cancelled {
                // The cancel came first: nothing changed, so bob's own session from signing up
                // goes on, and the pass started none.
                #expect(redeem != 200, "a cancelled request's pass signs nobody in")
                #expect(left.map(\.methods) == [["pwd"]], "only bob's own session: \(left.map(\.methods))")
            } else {
                #expect(state == .completed)
                #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .locked)
                #expect(left.isEmpty, "a disowned recovery leaves no session: \(left.map(\.methods))")
            }
        }
    }

    @Test func anAdminLiftsTheHoldAndAnUnlockAfterADisownRemovesWhatSlippedIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, _, cancel) = try await RecoverySteps.recovered(app, clock: clock)
            // The reset took the phone's proof with it.
            #expect(try await app.twofold.users.user(id: bob.user.id)?.verifiedPhone == nil)
            _ = try await app.client(from: "10.9.0.1").send(API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            // A factor an in-flight request added while the account was being locked.
            let setup = try await app.twofold.totp.setup(userID: bob.user.id, account: "bob@example.com")
            let secret = try Base32.decode(setup.secret)
            try await app.twofold.totp.confirm(
                try TOTPSteps.code(secret, clock), userID: bob.user.id, origin: .none, addedBy: nil)
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 1)
            // The administrator unlocks: it goes first, and the password works again (a disowned
            // recovery holds nothing).
            let stepped = try await Administrators.stepUp(
                app, token: try await Administrators.signIn(app, "alice").accessToken.token)
            _ = try await app.client().send(API.Admin.unlock, "\(bob.user.id)", bearer: stepped)
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 0)
            _ = try await app.client(from: "10.0.0.9").send(
                API.Auth.login, LoginRequest(username: "bob", password: Accounts.password))
        }
    }

    @Test func theCancelLinkWorksTenDaysFromTheDecision() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (_, id, cancel) = try await RecoverySteps.pendingReview(app, clock: clock)
            clock.advance(by: 11 * 86_400)
            let admin = try await Administrators.signIn(app, "alice", register: true)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .ok)
            clock.advance(by: 3600)
            let cancelled = try await app.client(from: "10.9.0.1").send(
                API.Recovery.cancel, RecoveryCancelRequest(token: cancel))
            #expect(cancelled.state == .cancelled)
        }
    }
}
