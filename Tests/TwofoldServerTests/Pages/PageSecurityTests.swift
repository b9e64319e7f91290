import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// The pages under attack: CSRF, other origins, markup in what people typed, cookies, redirects,
/// and who may see the console.
@Suite struct PageSecurityTests {
    @Test func formsWithoutTheirTokenOrFromAnotherSiteAreRefusedAndChangeNothing() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, "bob")
            let browser = TestBrowser(app)
            let page = try await browser.get("/")
            let csrf = try #require(page.csrf)
            let attempts: [([String: String], HTTPHeaders)] = [
                (["account": "bob", "password": Accounts.password], [:]),
                // Another token of the same shape (its first digit changed, never to itself).
                (
                    [
                        "account": "bob", "password": Accounts.password,
                        "csrf": (csrf.first == "0" ? "1" : "0") + csrf.dropFirst(),
                    ], [:]
                ),
                (
                    ["account": "bob", "password": Accounts.password, "csrf": csrf],
                    ["Origin": "https://evil.example"]
                ),
                (
                    ["account": "bob", "password": Accounts.password, "csrf": csrf],
                    ["Sec-Fetch-Site": "cross-site"]
                ),
            ]
            for (form, extra) in attempts {
                let refused = try await browser.post("/", form, extra: extra)
                #expect(refused.status == .forbidden, "\(extra) \(form.keys.sorted())")
                #expect(refused.body.contains("<h1>"), "a page, not JSON")
                #expect(refused.headers.first(name: "Content-Security-Policy")?.contains("default-src 'none'") == true)
                #expect(browser.cookies["twofold_session"] == nil)
            }
            // Nothing was tried: no sign-in, no failure recorded.
            let events = try await app.twofold.audit.events(type: "login.succeeded").count
            #expect(events == 1)  // bob's own, at sign-up
            // With its token, from this site, it works, and the cookie carries its attributes.
            var setCookie = ""
            let signedIn = try await browser.post(
                "/", ["account": "bob", "password": Accounts.password, "csrf": csrf],
                extra: ["Origin": "http://localhost:8080", "Sec-Fetch-Site": "same-origin"])
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers.first(name: .location) == "/account/security")
            setCookie = signedIn.headers[.setCookie].first { $0.hasPrefix("twofold_session=") } ?? ""
            #expect(
                setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/"))
            #expect(!setCookie.contains("Secure"), "plain HTTP on localhost")
            let security = try await browser.get("/account/security")
            #expect(security.status == .ok && security.body.contains("Sign out bob"))
            // Signing out is a form too, and revokes the session the cookie names.
            let token = try #require(browser.cookies["twofold_session"])
            let out = try await browser.post("/sign-out", ["csrf": security.csrf ?? ""])
            #expect(out.status == .seeOther && browser.cookies["twofold_session"] == nil)
            #expect(try await app.twofold.sessions.browserSession(refreshToken: token) == nil)
            browser.cookies["twofold_session"] = token
            #expect(try await browser.get("/account/security").status == .seeOther, "a revoked cookie signs nobody in")
        }
    }

    /// The pages' script calls the JSON API with the browser's session cookie: only with the
    /// page's CSRF token in `X-CSRF-Token` and from this site, and never once the session ended.
    @Test func theAPITakesTheBrowserSessionOnlyWithItsTokenFromThisSite() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, "bob")
            let browser = TestBrowser(app)
            #expect(try await browser.signIn("bob").status == .seeOther)
            let page = try await browser.get("/account/security")
            let token = try #require(page.csrf)
            let options = API.Passkeys.registerOptions.href()
            let allowed = try await browser.postJSON(options, extra: [Wire.Header.csrfToken: token])
            #expect(allowed.status == .ok && allowed.body.contains("\"challenge\""), "\(allowed.body)")
            let other = (token.first == "0" ? "1" : "0") + token.dropFirst()
            let refusals: [(HTTPHeaders, HTTPStatus)] = [
                ([:], .forbidden),
                ([Wire.Header.csrfToken: other], .forbidden),
                ([Wire.Header.csrfToken: token, "Sec-Fetch-Site": "cross-site"], .forbidden),
                ([Wire.Header.csrfToken: token, "Origin": "https://evil.example"], .forbidden),
            ]
            for (extra, status) in refusals {
                let refused = try await browser.postJSON(options, extra: extra)
                #expect(refused.status == status, "\(extra): \(refused.body)")
                #expect(refused.headers.contentType == .init(type: "application", subType: "problem+json"))
            }
            // Only the endpoints the pages' script calls take the cookie: not a step-up (which would
            // hand a script a bearer token of its own), not the account, not administration.
            let admin = "/" + API.Admin.resetMFA.path(UUID().uuidString)
            for endpoint in [API.Auth.stepUp.href(), admin, API.DeviceKeys.enroll.href()] {
                let refused = try await browser.postJSON(
                    endpoint, #"{"method":"password","password":"\#(Accounts.password)"}"#,
                    extra: [Wire.Header.csrfToken: token])
                #expect(refused.status == .unauthorized, "\(endpoint): \(refused.body)")
            }
            // A bearer token still wins over the cookie: a wrong one is refused, not the cookie used.
            let bearer = try await browser.postJSON(
                options, extra: [Wire.Header.csrfToken: token, "Authorization": "Bearer not-a-token"])
            #expect(bearer.status == .unauthorized)
            // The session ended: its cookie signs nobody in, token or not.
            let session = try #require(browser.cookies["twofold_session"])
            #expect(try await browser.post("/sign-out", ["csrf": token]).status == .seeOther)
            browser.cookies["twofold_session"] = session
            let ended = try await browser.postJSON(options, extra: [Wire.Header.csrfToken: token])
            #expect(ended.status == .unauthorized, "\(ended.body)")
        }
    }

    /// A passkey's answer reaches the sign-in form as the script puts it there; one that is not
    /// a passkey's answer is said in words and signs nobody in.
    @Test func aPasskeyFormWithoutAPasskeysAnswerSignsNobodyIn() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, "bob")
            let browser = TestBrowser(app)
            let page = try await browser.get("/")
            #expect(page.body.contains("action=\"\(Pages.passkeySignIn.href())\" data-passkey-form"))
            #expect(page.body.contains("data-options=\"\(API.Passkeys.signInOptions.href())\""))
            for credential in ["", "not json", "{\"id\":1}", String(repeating: "[", count: 70_000)] {
                let refused = try await browser.post(
                    Pages.passkeySignIn.href(), ["csrf": page.csrf ?? "", "credential": credential])
                #expect(refused.status == .unprocessableEntity, "\(credential.prefix(20))")
                #expect(refused.body.contains("is not a passkey&#39;s answer"), "\(refused.body)")
                #expect(browser.cookies["twofold_session"] == nil)
            }
            let forged = try await browser.post(Pages.passkeySignIn.href(), ["credential": "{}"])
            #expect(forged.status == .forbidden)
        }
    }

    @Test func productionCookiesAreSecureWithTheHostPrefix() async throws {
        try await withTestApp(
            mode: .production,
            adjust: {
                $0.smsProvider = .disabled
                $0.emailProvider = .disabled
                $0.webAuthn.origins = ["https://id.example.com"]
            }
        ) { app in
            _ = try await Accounts.signUp(app, "bob")
            let browser = TestBrowser(app)
            let page = try await browser.get("/")
            #expect(page.headers[.setCookie].contains { $0.hasPrefix("__Host-twofold_csrf=") && $0.contains("Secure") })
            let signedIn = try await browser.post(
                "/", ["account": "bob", "password": Accounts.password, "csrf": page.csrf ?? ""])
            #expect(signedIn.status == .seeOther, "\(signedIn.headers[.setCookie])")
            let setCookies: [String] = signedIn.headers[.setCookie]
            var cookie = ""
            for candidate in setCookies where candidate.hasPrefix("__Host-twofold_session=") { cookie = candidate }
            // The session's cookie, the device cookie and a new CSRF seed (a form token of before
            // the sign-in works no more), all under the prefix, with the same rules.
            #expect(
                setCookies.count == 3 && setCookies.allSatisfy { $0.hasPrefix("__Host-") }
                    && setCookies.contains { $0.hasPrefix("__Host-twofold_device=") }
                    && setCookies.contains { $0.hasPrefix("__Host-twofold_csrf=") }, "\(setCookies)")
            // The form token of the signed-out page no longer works.
            let stale = try await browser.post("/sign-out", ["csrf": page.csrf ?? ""])
            #expect(stale.status == .forbidden)
            #expect(!cookie.isEmpty)
            for cookie in setCookies {
                #expect(
                    cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
                    "cookie=[\(cookie)] all=\(setCookies)")
                #expect(cookie.contains("Path=/") && !cookie.contains("Domain="))
            }
        }
    }

    @Test func signedOutPagesGoToSignInAndComeBackButNeverElsewhere() async throws {
        try await withTestApp { app in
            _ = try await Accounts.signUp(app, "bob")
            let browser = TestBrowser(app)
            for path in ["/account/security", "/admin", "/admin/recovery", "/admin/audit"] {
                let page = try await browser.get(path)
                #expect(page.status == .seeOther, "\(path)")
                #expect(page.headers.first(name: .location)?.hasPrefix("/?next=") == true, "\(path)")
            }
            let filtered = try await browser.get("/admin/audit?type=login.failed")
            #expect(
                filtered.headers.first(name: .location) == "/?next=%2Fadmin%2Faudit%3Ftype%3Dlogin%2Efailed",
                "the query comes back too")
            let form = try await browser.get("/?next=%2Fadmin%2Faudit")
            #expect(form.body.contains("name=\"next\" value=\"/admin/audit\""))
            let back = try await browser.post(
                "/",
                [
                    "account": "bob", "password": Accounts.password, "csrf": form.csrf ?? "",
                    "next": "/admin/audit",
                ])
            #expect(back.headers.first(name: .location) == "/admin/audit", "comes back where it was sent from")
            for next in ["//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"] {
                browser.cookies["twofold_session"] = nil
                let fresh = try await browser.get("/")
                let page = try await browser.post(
                    "/", ["account": "bob", "password": Accounts.password, "csrf": fresh.csrf ?? "", "next": next])
                #expect(page.headers.first(name: .location) == "/account/security", "\(next)")
            }
        }
    }

    @Test func whatPeopleTypedIsShownAsTextEverywhere() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Administrators.adminTokens(app)
            let markup = "<script>alert(1)</script><img src=x onerror=alert(2)>"
            let deviceMarkup = "<img src=x onerror=alert(3)>"
            let bob = try await Accounts.signUp(app, "bob")
            // A recovery message, waiting for review.
            let (_, started, _) = try await RecoverySteps.start(app, "bob@example.com", message: markup)
            let mail = try #require(
                try await RecoverySteps.messages(app, clock: clock, to: "bob@example.com").first {
                    $0.body.contains("Your code is")
                })
            let (proven, _) = try await RecoverySteps.post(
                app, API.Recovery.verifyEmail.path("\(try #require(started).recoveryId)"),
                ["code": try RecoverySteps.code(in: mail)])
            #expect(proven == .ok)
            // bob's browser's User-Agent becomes his session's and remembered device's name.
            let bobBrowser = TestBrowser(app)
            bobBrowser.userAgent = markup
            _ = try await bobBrowser.signIn("bob")
            // A device model, through seed 004's enrolment (SMS codes go to a verified
            // number), once his browser is signed in with the password.
            try await Accounts.verifyPhone(app, token: bob.accessToken.token, clock: clock)
            _ = try await app.client().send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "bob", phoneNumber: "+14155550123", method: "smsOTP", deviceId: "device-1",
                    deviceModel: deviceMarkup),
                bearer: bob.accessToken.token)
            let security = try await bobBrowser.get("/account/security")
            #expect(security.status == .ok)
            let adminBrowser = TestBrowser(app)
            _ = try await adminBrowser.signInAsAdministrator()
            var pages = [security]
            pages.append(try await adminBrowser.get("/admin/users/\(bob.user.id)"))
            pages.append(try await adminBrowser.get("/admin/audit"))
            pages.append(try await adminBrowser.get("/admin?q=bob"))
            pages.append(try await adminBrowser.get("/admin/recovery"))
            for page in pages {
                #expect(page.status == .ok)
                #expect(!page.body.contains("<script>alert") && !page.body.contains("<img src=x"))
            }
            // The person sees the session named, not the User-Agent it sent; an administrator sees both.
            #expect(pages[0].body.contains("Unknown app") && !pages[0].body.contains("alert(1)"), "the session's name")
            #expect(pages[0].body.contains("&lt;img src=x onerror=alert(3)&gt;"), "the phone's model, as text")
            #expect(pages[1].body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the session's User-Agent")
            #expect(pages[1].body.contains("&lt;img src=x onerror=alert(2)&gt;"), "the device model or session")
            #expect(pages[4].body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the recovery message")
            // The reviewer sees the account's recent sign-ins beside the request: when, from where, how.
            #expect(pages[4].body.contains("<h3>Recent sign-ins</h3><ul><li><time datetime="), "\(pages[4].body)")
            #expect(pages[4].body.contains("from 10.7.0.1, Unknown app, with password</li>"))
        }
    }

    @Test func theConsoleRefusesNonAdminsAndLockedAdmins() async throws {
        try await withTestApp { app in
            let admin = try await Administrators.adminTokens(app)
            _ = try await Accounts.signUp(app, "bob")
            let bob = TestBrowser(app)
            _ = try await bob.signIn("bob")
            for path in ["/admin", "/admin/recovery", "/admin/audit", "/admin/users/\(admin.user.id)"] {
                let page = try await bob.get(path)
                #expect(page.status == .forbidden, "\(path)")
                #expect(page.body.contains("Administrators only"))
            }
            let refused = try await bob.post(
                "/admin/users/\(admin.user.id)/reset-mfa", ["csrf": try await bob.get("/account/security").csrf ?? ""])
            #expect(refused.status == .forbidden)
            let alice = TestBrowser(app)
            _ = try await alice.signInAsAdministrator()
            #expect(try await alice.get("/admin").status == .ok)
            // Locked, her session's cookie no longer opens the console (as `AdminOnly` in the API).
            #expect(try await app.twofold.users.lock(userID: admin.user.id, now: Date()))
            #expect(try await alice.get("/admin").status == .forbidden)
        }
    }

    /// The console as an administrator works it: a user's locked factor and when it opens, the
    /// audit log of one account named as a person would, a page at a time, and the API refusing
    /// a locked administrator as the pages do.
    @Test func theConsoleShowsLocksAndPagesTheAuditLogOfANamedUser() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let admin = try await Administrators.adminTokens(app)
            let bob = try await Accounts.signUp(app, "bob", address: "10.0.0.2")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            let flow = try await TOTPSteps.startLogin(app, "bob", from: "10.0.0.2")
            for _ in 0..<5 {
                _ = try await TOTPSteps.validate(app, flow: flow, code: try TOTPSteps.code(secret, clock, offset: 3600))
            }
            let console = TestBrowser(app)
            _ = try await console.signInAsAdministrator()
            let user = try await console.get("/admin/users/\(bob.user.id)")
            #expect(user.status == .ok && user.body.contains("<dt>Factor locks</dt><dd>totp until"))

            let first = try await console.get("/admin/audit?user=BOB%40example.com&limit=2")
            #expect(first.status == .ok && first.body.contains("value=\"bob\""), "the filter names bob")
            #expect(first.body.components(separatedBy: "<tr><td class=\"nowrap\">").count == 3, "two events on a page")
            // The events each page shows, newest first and in words, are bob's own (named in the
            // Who column), and the second page goes on where the first stopped.
            func types(_ page: TestBrowser.Page) -> [String] {
                page.body.components(separatedBy: "<tr><td class=\"nowrap\">").dropFirst().compactMap {
                    let cells = $0.components(separatedBy: "</td><td>")
                    return cells.count > 2 && cells[1].contains(">bob</a>") ? cells[2] : nil
                }
            }
            let bobs = try await app.twofold.audit.events(userID: bob.user.id).map { AuditWords.event($0.type) }
            #expect(!first.body.contains("Newer") && first.body.contains("Older"))
            let older = try #require(
                first.body.range(of: "href=\"/admin/audit?").map {
                    "/admin/audit?"
                        + first.body[$0.upperBound...].prefix { $0 != "\"" }
                        .replacingOccurrences(of: "&amp;", with: "&")
                })
            #expect(older.contains("userId=\(bob.user.id.uuidString)") && older.contains("offset=2"))
            let second = try await console.get(older)
            #expect(second.status == .ok && second.body.contains("Newer"))
            #expect(types(first) + types(second) == Array(bobs.prefix(4)), "bob's events, in order")
            let nobody = try await console.get("/admin/audit?user=nobody")
            #expect(nobody.body.contains("No account is named nobody") && nobody.body.contains("No events."))

            // Locked, the administrator's token opens nothing in the API either.
            #expect(try await app.twofold.users.lock(userID: admin.user.id, now: Date()))
            let refused = try await refusal {
                try await app.client().send(API.Admin.users, bearer: admin.accessToken.token)
            }
            #expect(refused.status == 403 || refused.status == 401)
        }
    }

    @Test func everyPageAndFormAnswerCarriesThePolicy() async throws {
        try await withTestApp { app in
            let browser = TestBrowser(app)
            let page = try await browser.get("/")
            let wrong = try await browser.post("/", ["csrf": page.csrf ?? "", "account": "nobody", "password": "x"])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.body.contains("role=\"alert\""))
            for answer in [page, wrong] {
                let policy = answer.headers.first(name: "Content-Security-Policy") ?? ""
                #expect(policy.contains("script-src 'self'") && policy.contains("style-src 'self'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                #expect(!answer.body.contains("<script>") && !answer.body.contains(" style="))
                #expect(!answer.body.contains(" on") || !answer.body.contains("onclick"))
            }
            let script = try await browser.get("/assets/twofold.js")
            #expect(script.headers.first(name: .contentType)?.hasPrefix("text/javascript") == true)
            #expect(!script.body.contains("eval(") && !script.body.contains("innerHTML"))
        }
    }
}

/// The security page's changes, as a person makes them: each asks the policy, a stale session
/// confirms it's them first, and the change lands.
@Suite struct SecurityPageTests {
    /// The second step as the page shows it: an SMS first method's code went with the password,
    /// so the page says where and counts down to another; wrong codes up to the lock shut the
    /// fields until it ends; and where a passkey comes first, an SMS code is sent only when asked.
    @Test func theSecondStepPageCountsDownShutsDuringALockAndSendsWhenAsked() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let bob = try await Accounts.signUp(app, "bob")
            _ = try await Codes.enableSMS(app, tokens: bob, clock: clock)
            clock.advance(by: 61)
            let browser = TestBrowser(app)
            var page = try await browser.signIn("bob")
            #expect(page.body.contains("Code sent by text message to +") && page.body.contains("0123"))
            #expect(page.body.contains("data-countdown=\"60\""), "another code in a minute")
            #expect(page.body.contains("src=\"/assets/twofold.js\""), "the countdown's script is there")
            #expect(try await Codes.deliver(app, clock: clock).count == 1, "the code went once")
            let flow = try #require(
                page.body.range(of: "name=\"flow\" value=\"").map {
                    String(page.body[$0.upperBound...].prefix { $0 != "\"" })
                })
            var statuses: [UInt] = []
            for _ in 0..<5 {
                page = try await browser.post(
                    "/sign-in/verify",
                    ["csrf": page.csrf ?? "", "flow": flow, "method": "sms", "methods": "sms,backup", "code": "000001"])
                statuses.append(page.status.code)
            }
            #expect(statuses == [401, 401, 401, 401, 429], "the fifth wrong code locks the factor")
            #expect(page.body.contains("name=\"code\" type=\"text\"") && page.body.contains(" disabled data-until=\""))
            // Said once, in words: how long, and what else to do; no "0 tries left", no second wait.
            #expect(
                page.body.contains("Too many wrong codes for this method. Try again in 5 minutes, or use another way."))
            #expect(page.body.components(separatedBy: "ry again").count == 2, "the wait is said once")
            #expect(!page.body.contains("0 tries left") && !page.body.contains("attempts left"))

            let alice = try await Accounts.signUp(app, "alice", address: "10.0.0.2")
            _ = try await Codes.enableSMS(app, tokens: alice, clock: clock)
            let later = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            try await PasskeyCalls.register(app, token: later, Passkey())
            clock.advance(by: 61)
            let other = TestBrowser(app)
            let second = try await other.signIn("alice")
            #expect(second.body.contains("Use your passkey"))
            #expect(second.body.contains("Send a code by text message"))
            #expect(!second.body.contains("Code sent by text message"), "no code was sent, so none is asked for")
            #expect(try await Codes.deliver(app, clock: clock).isEmpty)
        }
    }

    /// The security page ends one other session, and removes a device with a key, each with its
    /// own button; the removal is the JSON endpoint's use case, so its policy and audit too.
    @Test func oneSessionIsSignedOutAndADeviceRemovedFromThePage() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let signUp = try await Accounts.signUp(app, "alice")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: signUp, clock: clock)
            clock.advance(by: 30)
            let later = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            let phone = SoftwareDeviceKey()
            #expect(try await DeviceKeySteps.enroll(app, token: later, phone: phone).0 == 200)

            clock.advance(by: 30)
            let browser = TestBrowser(app)
            let second = try await browser.signIn("alice")
            let signedIn = try await browser.secondStep(second, method: "totp", code: try TOTPSteps.code(secret, clock))
            #expect(signedIn.status == .seeOther)
            let page = try await browser.get("/account/security")
            #expect(page.body.contains("iPhone 15 Pro") && page.body.contains("aria-label=\"Remove iPhone 15 Pro\""))

            // The other two sessions (the sign-up's and the later one): each listed with a button of
            // its own, and ended by it; this one has none.
            let sessions = try await app.twofold.sessions.list(userID: signUp.user.id, current: nil)
            let others = sessions.filter { page.body.contains("/sessions/\($0.id.uuidString)/sign-out") }
            #expect(sessions.count == 3 && others.count == 2)
            for other in others {
                let ended = try await browser.post(
                    "/account/security/sessions/\(other.id.uuidString)/sign-out", ["csrf": page.csrf ?? ""])
                #expect(ended.status == .ok && ended.body.contains("That session was signed out"))
            }
            let over = try await refusal { try await app.client().send(API.Account.show, bearer: later) }
            #expect(over.status == 401, "the later session is over")
            #expect(try await browser.get("/account/security").status == .ok, "this one goes on")

            // A session or device that is not there is said so, and nothing changes.
            let noSession = try await browser.post(
                "/account/security/sessions/not-a-session/sign-out", ["csrf": page.csrf ?? ""])
            #expect(noSession.status == .notFound && noSession.body.contains("No such session"))
            let noDevice = try await browser.post(
                "/account/security/devices/no-such-phone/remove", ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(noDevice.status == .notFound && noDevice.body.contains("No such device"))
            #expect(try await app.twofold.deviceKeys.store.devices(userID: signUp.user.id).count == 1)
            let removed = try await browser.post(
                "/account/security/devices/iphone-1/remove", ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(removed.status == .ok && removed.body.contains("The device was removed"))
            #expect(try await app.twofold.deviceKeys.store.devices(userID: signUp.user.id).isEmpty)
            #expect(try await AuditQueries.count(type: "factor.removed", on: app) == 1)
        }
    }

    @Test func changesAskForAStepUpThenWork() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let bob = try await Accounts.signUp(app, "bob")
            let (secret, _) = try await TOTPSteps.enable(app, tokens: bob, clock: clock)
            let browser = TestBrowser(app)
            let second = try await browser.signIn("bob")
            #expect(second.status == .ok && second.body.contains("Code from your authenticator app"))
            let signedIn = try await browser.secondStep(second, method: "totp", code: try TOTPSteps.code(secret, clock))
            #expect(signedIn.status == .seeOther)
            var page = try await browser.get("/account/security")
            #expect(page.body.contains("Sign in faster next time"), "the passkey nudge after a code sign-in")

            // Six minutes on, new backup codes need a fresh proof: "Confirm it's you", then they come.
            clock.advance(by: 6 * 60)
            let asked = try await browser.post("/account/security/backup-codes", ["csrf": page.csrf ?? ""])
            #expect(asked.status == .forbidden && asked.body.contains("Confirm it"))
            // Only a factor had before will do, so that is all the page offers: the app's code
            // first, a backup code a click away, and no password (which would only loop).
            #expect(asked.body.contains("Code from your authenticator app") && asked.body.contains("Use a backup code"))
            #expect(!asked.body.contains("name=\"password\""), "the password is not offered where it cannot do")
            let backup = try await browser.post(
                "/step-up",
                [
                    "csrf": asked.csrf ?? "", "method": "backup", "switch": "1", "need": "recentSecondFactor",
                    "next": "/account/security",
                ])
            #expect(backup.status == .forbidden && backup.body.contains("Backup code"))
            #expect(backup.body.contains("name=\"need\" value=\"recentSecondFactor\""), "what was asked is kept")
            // The page a passkey's addition is sent to (by the script) is the same.
            let shown = try await browser.get("/step-up?next=/account/security&need=recentSecondFactor")
            #expect(shown.status == .forbidden && shown.body.contains("Code from your authenticator app"))
            #expect(!shown.body.contains("name=\"password\""))
            clock.advance(by: 30)
            let stepped = try await browser.post(
                "/step-up",
                [
                    "csrf": asked.csrf ?? "", "method": "totp", "code": try TOTPSteps.code(secret, clock),
                    "next": "/account/security",
                ])
            #expect(stepped.status == .seeOther)
            let codes = try await browser.post("/account/security/backup-codes", ["csrf": page.csrf ?? ""])
            #expect(codes.status == .ok && codes.body.components(separatedBy: "<li><code>").count == 11)

            // SMS codes: a code to the number, confirmed.
            _ = try await Codes.deliverAll(app, clock: clock)
            let sent = try await browser.post(
                "/account/security/codes/sms", ["csrf": page.csrf ?? "", "phoneNumber": "+14155550123"])
            #expect(sent.status == .ok && sent.body.contains("We sent a code by text message"))
            let code = try #require(try await Codes.deliver(app, clock: clock).first).1
            let on = try await browser.post(
                "/account/security/codes/sms/confirm", ["csrf": page.csrf ?? "", "code": code])
            #expect(on.status == .ok && on.body.contains("SMS codes are on"))

            // A wrong current password is said on the page and changes nothing.
            let wrong = try await browser.post(
                "/account/security/password",
                ["csrf": page.csrf ?? "", "currentPassword": "not it", "newPassword": "a brand new password 7"])
            #expect(wrong.status == .unauthorized && wrong.body.contains("The current password is wrong"))

            // Turning the app off: the app proven a moment ago does not vouch for its own removal,
            // and the SMS codes this session added vouch for nothing; the password again does.
            let refused = try await browser.post(
                "/account/security/totp/remove", ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(refused.status == .forbidden && refused.body.contains("Confirm it"))
            #expect(refused.body.contains("Or your password") && refused.body.contains("name=\"password\""))
            #expect(refused.body.contains("Get a code by text message"), "every code method is offered")
            // A code by text message, asked for on the page, reaches the phone and is checked:
            // the SMS codes this session added cannot vouch for it, and the page says so.
            let smsChosen = try await browser.post(
                "/step-up",
                [
                    "csrf": page.csrf ?? "", "method": "sms", "switch": "1", "need": "otherProof",
                    "next": "/account/security",
                ])
            #expect(smsChosen.body.contains("Send a code by text message to"))
            let smsSent = try await browser.post(
                "/step-up",
                [
                    "csrf": page.csrf ?? "", "method": "sms", "send": "1", "need": "otherProof",
                    "next": "/account/security",
                ])
            #expect(smsSent.status == .forbidden && smsSent.body.contains("A code went to"))
            #expect(smsSent.body.contains("Code sent by text message to"))
            #expect(!smsSent.body.contains("+14155550123"), "the number is shown masked")
            let smsCode = try #require(try await Codes.deliver(app, clock: clock).first).1
            let smsRefused = try await browser.post(
                "/step-up",
                [
                    "csrf": page.csrf ?? "", "method": "sms", "code": smsCode, "need": "otherProof",
                    "next": "/account/security",
                ])
            #expect(smsRefused.status == .forbidden && smsRefused.body.contains("cannot confirm it"))
            let password = try await browser.post(
                "/step-up",
                [
                    "csrf": page.csrf ?? "", "method": "password", "password": Accounts.password,
                    "next": "/account/security",
                ])
            #expect(password.status == .seeOther)
            let off = try await browser.post(
                "/account/security/totp/remove", ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(off.status == .ok && off.body.contains("The authenticator app was removed"))
            page = try await browser.get("/account/security")
            #expect(page.body.contains("Set up an authenticator app"))
            let events = try await app.twofold.audit.events(userID: bob.user.id).map(\.type)
            #expect(events.filter { $0 == "factor.removed" }.count == 1)
        }
    }
}
