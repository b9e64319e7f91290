import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// The security page opens with every way to sign in, whether it is on, and where to change it;
/// the codes name where they go.
@Suite struct SecurityOverviewTests {
    @Test func theSecurityPageOpensWithEachMethodItsStateAndWhereToChangeIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let (browser, _, _, _) = try await TestBrowser.signedInWithTheApp(app, clock: clock)
            let page = try await browser.get("/account/security")
            let body = page.body
            #expect(body.contains("<h2 id=\"s-overview\">Sign-in methods</h2>"))
            // Times are said against the server's clock, by the script every page loads.
            #expect(body.contains("<body data-now=\"\(PageTime.machine(clock.now))\">"))
            #expect(body.contains("<script src=\"\(Pages.script.href())\" defer>"))
            let rows: [(String, String, String, String)] = [
                ("Password", "Set", "Change", "s-password"),
                ("Passkeys", "None", "Add", "s-passkeys"),
                ("Text message codes", "Off", "Set up", "s-sms"),
                ("Email codes", "Off", "Set up", "s-email"),
                ("Backup codes", "10 left", "Make new", "s-backup"),
                ("Devices with keys", "None", "About", "s-devices"),
            ]
            for (method, status, action, anchor) in rows {
                #expect(
                    body.contains(
                        "<tr><th scope=\"row\">\(method)</th><td>\(status)</td><td><a href=\"#\(anchor)\" "
                            + "aria-label=\"\(action): \(method)\">\(action)</a></td></tr>"), "\(method)")
                #expect(body.contains("id=\"\(anchor)\""), "the row's section is there: \(anchor)")
            }
            #expect(body.contains("<th scope=\"row\">Authenticator app</th><td>On, set up <time datetime="))
            // The account's other session (its sign-up's) signs out with a form, not its text.
            #expect(
                body.contains("</time> <form class=\"inline\" method=\"post\" action=\"/account/security/sessions/"))
            #expect(!body.contains("&lt;form"))
            // The codes say where they go: the address for email, before it is on.
            #expect(body.contains("<p>Codes by email go to bob@example.com.</p>"))
            let sms = try #require(body.range(of: "id=\"s-sms\""))
            let email = try #require(body.range(of: "id=\"s-email\""))
            let field = try #require(body.range(of: "name=\"phoneNumber\""))
            #expect(
                sms.upperBound < field.lowerBound && field.upperBound < email.lowerBound, "the phone field is SMS's")
        }
    }

    /// A form refused for what was typed says so once, in words, and each field's problem at
    /// the field: no "Validation failed", no field named as the API names it.
    @Test func aRefusedFormSaysEachProblemOnceAtItsField() async throws {
        try await withTestApp { app in
            let browser = TestBrowser(app)
            let form = try await browser.get(Pages.register.href())
            let refused = try await browser.post(
                Pages.register.form.href(), ["csrf": form.csrf ?? "", "username": "", "email": "x", "password": ""])
            #expect(refused.status == .unprocessableEntity)
            #expect(
                refused.body.contains(
                    "<h2>Check what you typed</h2><p>Each field to fix says what is wrong, below.</p>"))
            #expect(!refused.body.contains("Validation failed"))
            for field in ["username", "email", "password"] {
                #expect(refused.body.contains("id=\"f-\(field)-error\""), "\(field)")
            }
            // Where a form has no field for it, the problem is said in words above it.
            let problem = InputValidation.failure(["phoneNumber": "must be in international form"])
            #expect(
                SecurityPages.alert(problem).html.contains(
                    "<h2>Check what you typed</h2><p>Phone number must be in international form.</p>"))
        }
    }
}
