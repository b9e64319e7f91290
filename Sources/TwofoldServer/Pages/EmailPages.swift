import Foundation
import TwofoldAPI
import Vapor

/// Confirming the account's email address: the link's page, its form, another link, and the
/// notice on the security page until it is confirmed.
extension SecurityPages {
    /// The verification link: a button, so that a mail scanner opening links confirms nothing.
    @Sendable func verifyEmailPage(request: Request) async throws -> Response {
        // Only the account's owner confirms: signed in first, then back here with the link.
        let visitor = try await signedIn(request)
        let csrf = browser.csrf(request)
        let token = (try? request.query.get(String.self, at: "token")) ?? ""
        let main: Markup = """
            <h1>Confirm your email address</h1>
            <p>Confirming the address lets it reset a forgotten password, and sends it a notice whenever your \
            sign-in methods change.</p>
            <form method="post" action="\(Pages.verifyEmail.form.href())">\(Self.csrfField(csrf.token))\
            <input type="hidden" name="token" value="\(token)">
            <button type="submit">Confirm my address</button></form>
            """
        return render(request, csrf, title: Pages.verifyEmail.title, main: main, visitor: visitor)
    }

    @Sendable func verifyEmailSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: TokenForm.self)
        let visitor = try await signedIn(request)
        do {
            let status = try await emailVerification.verify(
                token: form.token ?? "", caller: visitor.caller, origin: request.origin)
            let csrf = browser.csrf(request)
            let main: Markup = """
                <h1>Address confirmed</h1>
                <p role="status">\(status.email) is confirmed.</p>
                <p><a href="\(Pages.accountSecurity.href())">Continue</a></p>
                """
            return render(request, csrf, title: "Address confirmed", main: main, visitor: visitor)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: visitor, next: (Pages.accountSecurity.href(), "Back"))
        }
    }

    @Sendable func resendVerification(request: Request) async throws -> Response {
        let visitor = try await signedIn(request)
        _ = try form(request, as: TokenForm.self)
        do {
            _ = try await emailVerification.resend(for: visitor.user, origin: request.origin)
            return Self.redirect(Pages.accountSecurity.href() + "?done=verification-sent")
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: visitor, next: (Pages.accountSecurity.href(), "Back"))
        }
    }

    /// Until the address is confirmed: what it does not do yet, and a button for another link.
    func emailVerificationNotice(_ user: User, csrf: String, justSent: Bool) -> Markup {
        guard user.emailVerifiedAt == nil else { return "" }
        var html: Markup = "<div class=\"todo\" role=\"status\"><h3>Confirm your email address</h3>"
        html += "<p>Until you open the link we sent to \(user.email), it cannot reset a forgotten "
        html += "password or start account recovery, and it gets no notice when your sign-in methods change. "
        html += "Everything else works.</p>"
        if justSent {
            html += "<p>A new link is on its way.</p>"
        } else {
            html += "<form method=\"post\" action=\"\(Pages.resendVerification.href())\">\(Self.csrfField(csrf))"
            html += "<button type=\"submit\" class=\"secondary\">Send another link</button></form>"
        }
        return html + "</div>"
    }
}
