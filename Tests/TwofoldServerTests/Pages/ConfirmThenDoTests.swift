import Foundation
import Testing
import TwofoldAPI
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// Changes that cannot be undone at a click ask once, without script; and "Confirm it's you"
/// makes the change it interrupted, never another one.
@Suite(.tags(.database)) struct ConfirmThenDoTests {
    @Test func aChangeThatCannotBeUndoneAsksOnceAndCancelChangesNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (browser, bob, _, _) = try await TestBrowser.signedInWithTheApp(app, clock: clock)
            let page = try await browser.get("/account/security")
            let asked = try await browser.post(Pages.totpRemove.href(), ["csrf": page.csrf ?? ""])
            #expect(asked.status == .ok && asked.body.contains("<h1>Turn off the authenticator app?</h1>"))
            #expect(asked.body.contains("name=\"confirmed\" value=\"1\""))
            #expect(asked.body.contains("href=\"/account/security\">Cancel</a>"))
            #expect(
                try await app.twofold.factorSettings.status(
                    of: try #require(try await app.twofold.users.user(id: bob.user.id))
                ).totp.enabled)

            let everywhere = try await browser.post(Pages.signOutEverywhere.href(), ["csrf": page.csrf ?? ""])
            #expect(everywhere.status == .ok && everywhere.body.contains("<h1>Sign out everywhere?</h1>"))
            #expect(try await browser.get("/account/security").status == .ok, "still signed in")
            let done = try await browser.post(
                Pages.signOutEverywhere.href(), ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(done.status == .seeOther && browser.cookies["twofold_session"] == nil)
        }
    }

    /// Six minutes on, turning the app off needs a fresh proof other than the app; once a backup
    /// code is given on "Confirm it's you", the app is off: no second click on the security page.
    @Test func aStepUpMakesTheChangeItInterrupted() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (browser, bob, _, codes) = try await TestBrowser.signedInWithTheApp(app, clock: clock)
            let page = try await browser.get("/account/security")
            clock.advance(by: 6 * 60)
            let asked = try await browser.post(Pages.totpRemove.href(), ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(
                asked.status == .forbidden && asked.body.contains("Once you have, the authenticator app is turned off.")
            )
            #expect(asked.body.contains("name=\"then\" value=\"/account/security/totp/remove\""))
            #expect(asked.body.contains("name=\"thenFields\" value=\"confirmed=1\""))
            let done = try await browser.post(
                Pages.stepUp.href(),
                [
                    "csrf": page.csrf ?? "", "method": "backup", "code": codes[0], "next": "/account/security",
                    "then": "/account/security/totp/remove", "thenFields": "confirmed=1",
                ])
            #expect(done.status == .ok && done.body.contains("The authenticator app was removed."), "\(done.body)")
            let user = try #require(try await app.twofold.users.user(id: bob.user.id))
            #expect(try await app.twofold.factorSettings.status(of: user).totp.enabled == false)
            #expect(try await AuditQueries.count(type: "factor.removed", on: app) == 1)
        }
    }

    /// Six minutes on, "Confirm it's you" offers the phone: the page shows a number, the phone
    /// picks it and signs, and the change the step-up interrupted is made.
    @Test func aStepUpApprovedOnThePhoneMakesTheChange() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (browser, bob, secret, _) = try await TestBrowser.signedInWithTheApp(app, clock: clock)
            // Bob's phone signs in with the app's next code and enrols its key.
            clock.advance(by: 30)
            let phoneSession = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, "bob", waits: false)
            let phone = SoftwareDeviceKey()
            try await DeviceKeySteps.enrollKey(app, "bob", token: phoneSession, phone: phone, device: "bobs-phone")
            let client = app.client()
            let page = try await browser.get("/account/security")
            clock.advance(by: 6 * 60)
            let asked = try await browser.post(Pages.totpRemove.href(), ["csrf": page.csrf ?? "", "confirmed": "1"])
            #expect(asked.status == .forbidden && asked.body.contains(">Approve on your phone</button>"))
            let carried = [
                "csrf": page.csrf ?? "", "next": "/account/security", "then": "/account/security/totp/remove",
                "thenFields": "confirmed=1",
            ]
            let waiting = try await browser.post(Pages.stepUpPhone.href(), carried)
            let number = try #require(
                waiting.body.firstMatch(of: /<p class="push-number">(\d\d)<\/p>/).map { Int($0.1) } ?? nil)
            #expect(waiting.body.contains("data-status=\"\(API.Push.stepUpStatus.href())\""))
            let requestID = try #require(waiting.body.firstMatch(of: /name="requestId" value="([0-9a-f-]+)"/)?.1)

            // Posted before the phone answers: the same wait again.
            var form = carried.merging(["method": "push", "requestId": String(requestID), "number": String(number)]) {
                $1
            }
            let early = try await browser.post(Pages.stepUp.href(), form)
            #expect(early.body.contains("Not approved yet") && early.body.contains(">\(number)</p>"))

            // The phone lists it as a step-up and approves.
            let shown = try #require(
                try await client.send(API.Push.pending, "bobs-phone", bearer: phoneSession).approvals.first)
            #expect(shown.purpose == "stepUp" && shown.requestId == requestID)
            _ = try await client.send(
                API.Push.decide, "bobs-phone", try PushSteps.decision(shown, .approve, number: number, key: phone),
                bearer: phoneSession)
            form["csrf"] = page.csrf ?? ""
            let done = try await browser.post(Pages.stepUp.href(), form)
            #expect(done.status == .ok && done.body.contains("The authenticator app was removed."), "\(done.body)")
            let user = try #require(try await app.twofold.users.user(id: bob.user.id))
            #expect(try await app.twofold.factorSettings.status(of: user).totp.enabled == false)
        }
    }

    /// The change a step-up carries back is one of the pages' own forms, with only its plain
    /// fields, and it is made under every rule again: another form's path, a password, another
    /// site's address or someone else's account get nothing.
    @Test func theCarriedChangeIsOnlyThePagesOwnAndAskedAgain() async throws {
        for path in [
            "/account/security/password", "//evil.example/account/security/totp/remove",
            "https://evil.example/account/security/totp/remove", "/account/security/passkeys/../totp/remove",
            "/account/security/passkeys/a%2Fb/delete", "/account/security/passkeys//delete", "/sign-out",
            "/account/security/totp/remove?x=1", "account/security/totp/remove",
        ] {
            #expect(PendingChange(path: path, fields: [:]) == nil, "\(path)")
        }
        let carried = PendingChange(
            then: "/account/security/passkeys/AbC-_1/delete", fields: "confirmed=1&csrf=x&password=y&name=a%26b")
        #expect(carried?.fields == ["confirmed": "1", "name": "a&b"])

        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (browser, bob, _, _) = try await TestBrowser.signedInWithTheApp(app, clock: clock)
            let alice = try await Accounts.signUp(app, "alice")
            let page = try await browser.get("/account/security")
            let step: [String: String] = [
                "csrf": page.csrf ?? "", "method": "password", "password": Accounts.password,
                "next": "/account/security",
            ]
            // Not a form a step-up completes: the step-up is done, and only that.
            let password = try await browser.post(
                Pages.stepUp.href(),
                step.merging(
                    ["then": "/account/security/password", "thenFields": "currentPassword=x&newPassword=y"]
                ) { $1 })
            #expect(password.status == .seeOther && password.headers.first(name: .location) == "/account/security")
            // An administrator's form, carried by someone who is not one: refused as it would be.
            let reset = try await browser.post(
                Pages.stepUp.href(),
                step.merging(["then": Pages.adminResetMFA.href(alice.user.id.uuidString), "thenFields": "confirmed=1"])
                { $1 })
            #expect(reset.status == .forbidden && reset.body.contains("Administrators only"), "\(reset.body)")
            #expect(try await AuditQueries.count(type: "admin.reset_mfa", on: app) == 0)
            _ = bob
        }
    }
}
