import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import TwofoldSQLite
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
            try await app.testing().test(
                .GET, API.Admin.recoveryRequests.path(), headers: .bearer(admin.accessToken.token)
            ) { response in
                let queue = try response.decode(AdminRecoveryResponse.self).requests
                #expect(queue.map(\.id) == [id])
                #expect(queue.first?.message == "<script>alert(1)</script>")
                #expect(queue.first?.username == "bob")
                #expect(queue.first?.state == .pendingReview)
                #expect(queue.first?.documentBytes == RecoverySteps.png.count)
            }
            try await app.testing().test(
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
            try await app.testing().test(
                .GET, API.Admin.recoveryDocument.path("\(id)"), headers: .bearer(admin.accessToken.token)
            ) { response in #expect(response.status == .notFound) }
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let pass = try RecoverySteps.token(of: Pages.recoveryPass, in: mail)
            #expect(mail.body.contains("/\(Pages.recoveryCancel.path)?token="))

            let (redeemed, tokensBody) = try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass])
            #expect(redeemed == .ok)
            let recovered = try decodeJSON(AuthTokensResponse.self, from: tokensBody).accessToken.token

            // bob's old session is over, his authenticator app gone.
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(bob.accessToken.token)) {
                response in #expect(response.status == .unauthorized)
            }
            try await app.testing().test(.GET, API.TwoFactor.status.path(), headers: .bearer(recovered)) { response in
                #expect(response.status == .ok)
                let status = try response.decode(TwoFactorStatus.self)
                #expect(status.isEnabled == false)
            }
            // Before a factor, nothing else: not even the primary method or the password.
            try await app.testing().test(
                .PUT, API.Account.changePassword.path(), headers: .bearer(recovered),
                body: json(["currentPassword": Accounts.password, "newPassword": "another long password 1"])
            ) { response in
                #expect(response.status == .forbidden)
                let problem = try response.problem()
                #expect(problem.code == "factor_setup_required")
            }
            // The pass works once.
            let (again, againBody) = try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass])
            #expect(again == .conflict)
            #expect(try decodeJSON(ProblemBody.self, from: againBody).code == "already_used")
            // Setting up an authenticator app is allowed, and lifts the gate.
            let fresh = AuthTokensResponse(
                accessToken: TokenDTO(token: recovered, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now),
                user: bob.user)
            _ = try await TOTPSteps.enable(app, tokens: fresh, clock: clock)
            try await app.testing().test(.GET, API.Auth.sessions.path(), headers: .bearer(recovered)) { response in
                #expect(response.status == .ok)
            }
            try await app.testing().test(.GET, API.TwoFactor.trustedDevices.path(), headers: .bearer(recovered)) {
                response in #expect(response.status == .ok)
            }
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
            for started in [known, unknown] {
                let (status, body) = try await RecoverySteps.post(
                    app, API.Recovery.verifyEmail.path("\(try #require(started).recoveryId)"), ["code": "000000"])
                #expect(status == .unauthorized)
                let problem = try decodeJSON(ProblemBody.self, from: body)
                #expect(problem.code == "invalid_code" && problem.attemptsRemaining == 4)
            }
            // The request for no account never leaves its first step, whatever is tried.
            let unknownID = try #require(unknown).recoveryId
            for guess in ["111111", "222222", "333333", "444444"] {
                _ = try await RecoverySteps.post(app, API.Recovery.verifyEmail.path("\(unknownID)"), ["code": guess])
            }
            let (tooMany, body) = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(unknownID)"), ["code": "555555"])
            #expect(tooMany == .unauthorized)
            #expect(try decodeJSON(ProblemBody.self, from: body).attemptsRemaining == 0)
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
            try await app.testing().test(
                .GET, API.Admin.recoveryRequests.path(), headers: .bearer(admin.accessToken.token)
            ) { response in
                let queue = try response.decode(AdminRecoveryResponse.self)
                #expect(queue.requests.isEmpty)
            }

            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first)
            let (proven, _) = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(id)"), ["code": try RecoverySteps.code(in: mail)])
            #expect(proven == .ok)
            // The administrator's password is no longer recent: step up first.
            clock.advance(by: 6 * 60)
            let (stale, staleBody) = try await RecoverySteps.post(
                app, API.Admin.approveRecovery.path("\(id)"), ["note": "ok"], headers: .bearer(admin.accessToken.token))
            #expect(stale == .forbidden)
            #expect(try decodeJSON(ProblemBody.self, from: staleBody).code == "step_up_required")
            // A non-admin is refused whatever they proved.
            let mallory = try await Accounts.signUp(app, "mallory")
            for path in [API.Admin.approveRecovery.path("\(id)"), API.Admin.denyRecovery.path("\(id)")] {
                let (status, _) = try await RecoverySteps.post(
                    app, path, ["note": "ok"], headers: .bearer(mallory.accessToken.token))
                #expect(status == .forbidden)
            }
            let stepped = try await Administrators.stepUp(app, token: admin.accessToken.token)
            let (empty, _) = try await RecoverySteps.post(
                app, API.Admin.denyRecovery.path("\(id)"), ["note": "  "], headers: .bearer(stepped))
            #expect(empty == .unprocessableEntity)
            let (denied, deniedBody) = try await RecoverySteps.post(
                app, API.Admin.denyRecovery.path("\(id)"), ["note": "The ID does not match."],
                headers: .bearer(stepped))
            #expect(denied == .ok)
            #expect(try decodeJSON(AdminRecoveryRequest.self, from: deniedBody).state == .denied)
            // Decided once: a second decision is refused.
            let (twice, _) = try await RecoverySteps.post(
                app, API.Admin.approveRecovery.path("\(id)"), ["note": "changed my mind"], headers: .bearer(stepped))
            #expect(twice == .conflict)
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
            let (early, earlyBody) = try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass])
            #expect(early == .forbidden)
            let problem = try decodeJSON(ProblemBody.self, from: earlyBody)
            #expect(problem.code == "not_yet_valid" && problem.retryAfter == 3600)
            try await app.testing().test(.GET, API.Recovery.status.path("\(id)")) { response in
                let status = try response.decode(RecoveryStatus.self)
                #expect(status.state == .approved && status.usableFrom == clock.now.addingTimeInterval(3600))
            }
            clock.advance(by: 3600 + 601)
            let (late, lateBody) = try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass])
            #expect(late == .unauthorized)
            #expect(try decodeJSON(ProblemBody.self, from: lateBody).code == "expired")
            let (wrong, _) = try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": "not-a-pass"])
            #expect(wrong == .unauthorized)
        }
    }

    @Test func thisWasntMeCancelsAndAfterTheFactLocksTheAccount() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await RecoverySteps.admin(app)
            let (bob, id, cancel) = try await RecoverySteps.pendingReview(app, clock: clock)
            let (cancelled, body) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            #expect(cancelled == .ok)
            #expect(try decodeJSON(RecoveryStatus.self, from: body).state == .cancelled)
            #expect(try await RecoverySteps.approve(app, id, admin: admin) == .conflict)
            let (bad, _) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel + "x"])
            #expect(bad == .notFound)

            // A second request goes through; "this wasn't me" afterwards locks the account.
            clock.advance(by: 60)
            let (_, second, _) = try await RecoverySteps.start(app, "bob@example.com")
            let secondID = try #require(second).recoveryId
            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").last)
            _ = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(secondID)"), ["code": try RecoverySteps.code(in: mail)])
            #expect(try await RecoverySteps.approve(app, secondID, admin: admin) == .ok)
            let approved = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("approved")
                }
            )
            let (redeemed, _) = try await RecoverySteps.post(
                app, API.Recovery.redeem.path(), ["pass": try RecoverySteps.token(of: Pages.recoveryPass, in: approved)]
            )
            #expect(redeemed == .ok)
            let (disowned, _) = try await RecoverySteps.post(
                app, API.Recovery.cancel.path(),
                ["token": try RecoverySteps.token(of: Pages.recoveryCancel, in: approved)])
            #expect(disowned == .ok)
            #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .locked)
            // Ten days on, the link no longer works.
            clock.advance(by: 10 * 86_400)
            let (old, _) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            #expect(old == .unauthorized)
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
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass]).0 }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .conflict }.count == 7)
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
            let (bobTries, _) = try await RecoverySteps.post(
                app, API.Admin.resetMFA.path("\(bob.user.id)"), [:], headers: .bearer(bob.accessToken.token))
            #expect(bobTries == .forbidden)
            clock.advance(by: 6 * 60)
            let (stale, _) = try await RecoverySteps.post(
                app, API.Admin.resetMFA.path("\(bob.user.id)"), [:], headers: .bearer(admin.accessToken.token))
            #expect(stale == .forbidden)
            let stepped = try await Administrators.stepUp(app, token: admin.accessToken.token)
            let (reset, _) = try await RecoverySteps.post(
                app, API.Admin.resetMFA.path("\(bob.user.id)"), [:], headers: .bearer(stepped))
            #expect(reset == .ok)
            try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(bob.accessToken.token)) {
                response in #expect(response.status == .unauthorized)
            }
            // bob signs in with the password alone now, and was told.
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["username": "bob", "password": Accounts.password])
            ) { response in
                let tokens = try response.decode(AuthTokensResponse.self)
                #expect(tokens.user.username == "bob")
            }
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
            let (disowned, _) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            #expect(disowned == .ok)
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 0)
            #expect(try await app.twofold.users.user(id: bob.user.id)?.status == .locked)
            #expect(try await app.twofold.sessions.list(userID: bob.user.id, current: nil).isEmpty)
            // A new request for the account shows its reviewer the lock and the disowned one.
            clock.advance(by: 60)
            let (_, started, _) = try await RecoverySteps.start(app, "bob@example.com")
            let mail = try #require(try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").last)
            _ = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(try #require(started).recoveryId)"),
                ["code": try RecoverySteps.code(in: mail)])
            let queued = try #require(try await app.twofold.recovery.queue(PageQuery()).requests.first)
            #expect(queued.accountStatus == "locked" && queued.disownedRecoveries == 1)
        }
    }

    @Test func thePasswordAloneWaitsWhileTheRecoveredSessionSetsUpAFactor() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (bob, session, _) = try await RecoverySteps.recovered(app, clock: clock)
            // Someone with bob's password races him: refused, for the hold's seven days.
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.9"),
                body: json(["username": "bob", "password": Accounts.password])
            ) { response in
                #expect(response.status == .forbidden)
                let problem = try response.problem()
                #expect(problem.code == "factor_setup_required")
            }
            // bob's recovered session sets up the app; then the password asks for it as usual.
            let fresh = AuthTokensResponse(
                accessToken: TokenDTO(token: session, expiresAt: clock.now),
                refreshToken: TokenDTO(token: "", expiresAt: clock.now), user: bob.user)
            _ = try await TOTPSteps.enable(app, tokens: fresh, clock: clock)
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.9"),
                body: json(["username": "bob", "password": Accounts.password])
            ) { response in
                #expect(response.status == .ok)
                let outcome = try response.decode(LoginOutcome.self)
                guard case .secondStep = outcome else {
                    Issue.record("expected a second step")
                    return
                }
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
            async let redeemed = RecoverySteps.post(app, API.Recovery.redeem.path(), ["pass": pass])
            async let cancelled = RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            let (redeem, cancelAnswer) = try await (redeemed, cancelled)
            #expect(cancelAnswer.0 == .ok)
            let state = try #require(try await app.twofold.recovery.status(id)).state
            let left = try await app.twofold.sessions.list(userID: bob.user.id, current: nil)
            if state == .cancelled {
                // The cancel came first: nothing changed, so bob's own session from signing up
                // goes on, and the pass started none.
                #expect(redeem.0 != .ok, "a cancelled request's pass signs nobody in")
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
            let (disowned, _) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            #expect(disowned == .ok)
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
            try await app.testing().test(
                .POST, API.Admin.unlock.path("\(bob.user.id)"), headers: .bearer(stepped)
            ) { response in #expect(response.status == .ok) }
            #expect(try await app.twofold.users.storedFactors(userID: bob.user.id).activeTOTP == 0)
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.9"),
                body: json(["username": "bob", "password": Accounts.password])
            ) { response in #expect(response.status == .ok) }
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
            let (cancelled, body) = try await RecoverySteps.post(app, API.Recovery.cancel.path(), ["token": cancel])
            #expect(cancelled == .ok)
            #expect(try decodeJSON(RecoveryStatus.self, from: body).state == .cancelled)
        }
    }
}
