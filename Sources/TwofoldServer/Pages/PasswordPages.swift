import Foundation
import TwofoldAPI
import Vapor

/// "Forgot password?" (`PasswordReset`) and the emailed link that confirms an address
/// (`EmailVerification`), as pages.
struct ForgotPasswordForm: Content, CSRFCarrying {
    var csrf: String?
    var email: String?
}

struct PasswordResetForm: Content, CSRFCarrying {
    var csrf: String?
    var token: String?
    var newPassword: String?
    var method: String?
    var code: String?
    /// `send`: an SMS code for the reset, rather than the reset itself.
    var action: String?
}

extension PasswordPages {
    @Sendable func forgotPasswordPage(request: Request) async throws -> Response {
        forgotPasswordForm(request, email: "", problem: nil)
    }

    private func forgotPasswordForm(
        _ request: Request, email: String, problem: Problem?, status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = """
            <h1>Reset your password</h1>
            <p>Enter your account's email address. If the address is confirmed, we send it a link to choose a new \
            password. If your account has another sign-in method (an authenticator app, a passkey, backup codes or \
            SMS codes), you will need it too.</p>
            """
        if let problem { main += Self.alert(problem) }
        main += """
            <form method="post" action="\(Pages.forgotPassword.form.href())" novalidate>\(Self.csrfField(csrf.token))
            \(Self.field("Email address", name: "email", type: "email", value: email, autocomplete: "email", error: problem?.errors?["email"]))
            <button type="submit">Send the link</button></form>
            <p>Lost every sign-in method? <a href="\(Pages.recovery.href())">Recover your account</a>.</p>
            """
        return render(request, csrf, title: Pages.forgotPassword.title, main: main, visitor: nil, status: status)
    }

    @Sendable func forgotPasswordSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: ForgotPasswordForm.self)
        do {
            let answer = try await passwordReset.forgot(
                PasswordForgotRequest(email: form.email ?? ""), origin: request.origin, logger: request.logger)
            let csrf = browser.csrf(request)
            let main: Markup = """
                <h1>Check your email</h1>
                <p role="status">\(answer.message)</p>
                <p>No message after a few minutes? Look in the spam folder, or \
                <a href="\(Pages.forgotPassword.href())">ask again</a>.</p>
                """
            return render(request, csrf, title: "Check your email", main: main, visitor: nil)
        } catch let problem as Problem where problem.status < 500 {
            return forgotPasswordForm(
                request, email: form.email ?? "", problem: problem,
                status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    @Sendable func passwordResetPage(request: Request) async throws -> Response {
        let token = (try? request.query.get(String.self, at: "token")) ?? ""
        guard !token.isEmpty else {
            // The page without its link's token: the way to a link.
            return forgotPasswordForm(request, email: "", problem: nil)
        }
        do {
            let options = try await passwordReset.options(token: token)
            return passwordResetForm(request, token: token, options: options, problem: nil)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil, next: (Pages.forgotPassword.href(), "Ask for a new link"))
        }
    }

    private func passwordResetForm(
        _ request: Request, token: String, options: PasswordResetOptions, problem: Problem?, note: String? = nil,
        chosen: FactorMethod? = nil, status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        let errors = problem?.errors ?? [:]
        var main: Markup = "<h1>Choose a new password</h1>\n"
        main += "<p>The new password signs you out on every device. This link works until "
        main += "\(PageTime.shown(options.expiresAt)).</p>\n"
        // A problem about one field is said there, once; any other above the form.
        let fields: Set<String> = ["newPassword", "code", "method"]
        if let problem, !(problem.errors.map { !$0.isEmpty && Set($0.keys).isSubset(of: fields) } ?? false) {
            main += Self.alert(problem)
        }
        if let note { main += Self.note(note) }
        main += """
            <form method="post" action="\(Pages.passwordReset.form.href())" novalidate data-password-reset>\
            \(Self.csrfField(csrf.token))<input type="hidden" name="token" value="\(token)">
            \(Self.field("New password", name: "newPassword", type: "password", autocomplete: "new-password", required: false, error: errors["newPassword"], hint: "At least 8 characters; not a common password."))
            """
        let methods = options.availableMethods.filter { $0 != .webauthn && $0 != .deviceKey }
        if options.secondFactorRequired, options.availableMethods.isEmpty {
            // Email codes alone: the link cannot stand for them too.
            let problem = PasswordReset.recoverInstead
            main = "<h1>Choose a new password</h1>\n" + Self.alert(problem)
            main += "<p><a class=\"button\" href=\"\(Pages.recovery.href())\">Recover your account</a></p>"
            return render(request, csrf, title: Pages.passwordReset.title, main: main, visitor: nil, status: status)
        }
        if options.secondFactorRequired {
            main += "<fieldset><legend>Confirm it's you with another sign-in method</legend>\n"
            if methods.isEmpty {
                main += "<p>Your account signs in with a passkey or a device key only: use the button below.</p>"
            }
            let selected = chosen ?? methods.first
            for method in methods {
                let id = "m-\(method.rawValue)"
                let checked: Markup = method == selected ? " checked" : .empty
                main += "<div class=\"check\"><input type=\"radio\" name=\"method\" id=\"\(id)\" "
                main += "value=\"\(method.rawValue)\"\(checked)><label for=\"\(id)\">"
                main += "\(Self.resetMethodWords(method, maskedPhone: options.maskedPhone))</label></div>\n"
            }
            if !methods.isEmpty {
                main += Self.field(
                    "Code", name: "code", autocomplete: "one-time-code", required: false,
                    error: errors["code"] ?? errors["method"])
            }
            if methods.contains(.sms) {
                main += "<button type=\"submit\" name=\"action\" value=\"send\" class=\"secondary\" formnovalidate>"
                main += "Send a code by SMS</button>\n"
            }
            main += "</fieldset>\n"
        }
        if !options.secondFactorRequired || !methods.isEmpty {
            main += "<button type=\"submit\">Set the new password</button>\n"
        }
        main += "</form>\n"
        if options.availableMethods.contains(.webauthn) {
            main += """
                <div data-passkey-reset="\(token)" data-options="\(API.PasswordReset.passkeyOptions.href())" \
                data-verify="\(API.PasswordReset.reset.href())" data-done="\(Pages.signIn.href())?reset=done" hidden>\
                <button type="button" data-passkey-button>Confirm with a passkey and set the password</button>\
                <p class="field-error" data-passkey-error role="alert"></p></div>
                """
        }
        main += "<p>No other sign-in method left? <a href=\"\(Pages.recovery.href())\">Recover your account</a>.</p>"
        return render(
            request, csrf, title: Pages.passwordReset.title, main: main, visitor: nil, status: status)
    }

    static func resetMethodWords(_ method: FactorMethod, maskedPhone: String?) -> String {
        switch method {
        case .totp: "A code from your authenticator app"
        case .backup: "One of your backup codes"
        case .sms: "A code by SMS to \(maskedPhone ?? "your phone")"
        default: method.rawValue
        }
    }

    @Sendable func passwordResetSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: PasswordResetForm.self)
        let token = form.token ?? ""
        let options: PasswordResetOptions
        do {
            options = try await passwordReset.options(token: token)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil, next: (Pages.forgotPassword.href(), "Ask for a new link"))
        }
        let method = form.method.map(FactorMethod.init(rawValue:))
        do {
            if form.action == "send" {
                let sent = try await passwordReset.sendCode(token: token)
                return passwordResetForm(
                    request, token: token, options: options, problem: nil,
                    note: "We sent a code to \(sent.maskedDestination).", chosen: .sms)
            }
            try await passwordReset.reset(
                PasswordResetRequest(
                    token: token, newPassword: form.newPassword ?? "",
                    method: options.secondFactorRequired ? method : nil,
                    code: form.code?.trimmingCharacters(in: .whitespaces)),
                origin: request.origin)
            let csrf = browser.csrf(request)
            let main: Markup = """
                <h1>Your password is changed</h1>
                <p role="status">Every session was signed out. Sign in with your new password.</p>
                <p><a class="button" href="\(Pages.signIn.href())">Sign in</a></p>
                """
            return render(request, csrf, title: "Password changed", main: main, visitor: nil)
        } catch let problem as Problem where problem.status < 500 {
            return passwordResetForm(
                request, token: token, options: options, problem: problem, chosen: method,
                status: HTTPResponseStatus(statusCode: problem.status))
        }
    }
}
