import Foundation
import TwofoldAPI
import Vapor

/// The pages (`Pages`): rendered here, on the same services as the JSON API, so no sign-in,
/// second-step, factor, recovery or administration rule is written twice. Each handler reads
/// its form, asks `BrowserSessions` whether the form and the visitor may, calls a service,
/// and renders its answer or its refusal in words.
struct PagesController: Sendable {
    let browser: BrowserSessions
    let signIn: SignIn
    let registration: Registration
    let secondStep: SecondStep
    let factorSettings: FactorSettings
    let accountChanges: AccountChanges
    let signOut: SignOut
    let sessions: SessionService
    let stepUp: StepUp
    let recovery: AccountRecovery
    let passwordReset: PasswordReset
    let emailVerification: EmailVerification
    let administration: Administration
    let callers: Callers
    let passkeys: PasskeyService
    let passkeyManagement: PasskeyManagement
    let passwordless: PasswordlessSignIn
    let deviceKeys: DeviceKeyService
    let deviceEnrolment: DeviceEnrolment
    let cookies: CookieRules
    let trustedDeviceLifetime: TimeInterval
    /// How long after a code is sent another may be (`TWOFOLD_CODE_RESEND_SECONDS`).
    let codeResendAfter: TimeInterval
    let clock: ServerClock
    let registrationEnabled: Bool

    func boot(_ routes: any RoutesBuilder) {
        on(routes, Pages.stylesheet) { _ in Self.asset(PageAssets.stylesheet, type: "text/css; charset=utf-8") }
        on(routes, Pages.script) { _ in Self.asset(PageAssets.script, type: "text/javascript; charset=utf-8") }
        on(routes, Pages.signIn, use: signInPage)
        on(routes, Pages.signIn.form, use: signInSubmit)
        on(routes, Pages.secondStep, use: secondStepSubmit)
        on(routes, Pages.resendCode, use: resendCode)
        on(routes, Pages.register, use: registerPage)
        on(routes, Pages.register.form, use: registerSubmit)
        on(routes, Pages.signOut, use: signOutSubmit)
        on(routes, Pages.stepUpPrompt, use: stepUpShow)
        on(routes, Pages.stepUp, use: stepUpSubmit)
        on(routes, Pages.accountSecurity, use: securityPage)
        on(routes, Pages.totpSetup, use: totpSetup)
        on(routes, Pages.totpConfirm, use: totpConfirm)
        on(routes, Pages.forgetDevice, use: forgetDevice)
        on(routes, Pages.totpRemove, use: totpRemove)
        on(routes, Pages.backupCodesRegenerate, use: backupCodesRegenerate)
        on(routes, Pages.passkeyRename, use: passkeyRename)
        on(routes, Pages.passkeyDelete, use: passkeyDelete)
        on(routes, Pages.codesSetup, use: codesSetup)
        on(routes, Pages.codesConfirm, use: codesConfirm)
        on(routes, Pages.codesDisable, use: codesDisable)
        on(routes, Pages.passwordChange, use: passwordChange)
        on(routes, Pages.sessionSignOut, use: sessionSignOut)
        on(routes, Pages.deviceRemove, use: deviceRemove)
        on(routes, Pages.signOutEverywhere, use: signOutEverywhere)
        on(routes, Pages.forgotPassword, use: forgotPasswordPage)
        on(routes, Pages.forgotPassword.form, use: forgotPasswordSubmit)
        on(routes, Pages.passwordReset, use: passwordResetPage)
        on(routes, Pages.passwordReset.form, use: passwordResetSubmit)
        on(routes, Pages.verifyEmail, use: verifyEmailPage)
        on(routes, Pages.verifyEmail.form, use: verifyEmailSubmit)
        on(routes, Pages.resendVerification, use: resendVerification)
        on(routes, Pages.recovery, use: recoveryPage)
        on(routes, Pages.recovery.form, use: recoveryStart)
        on(routes, Pages.recoveryStatus, use: recoveryStatusPage)
        on(routes, Pages.recoveryVerify, use: recoveryVerify)
        on(routes, Pages.recoveryPass, use: recoveryPassPage)
        on(routes, Pages.recoveryPass.form, use: recoveryPassSubmit)
        on(routes, Pages.recoveryCancel, use: recoveryCancelPage)
        on(routes, Pages.recoveryCancel.form, use: recoveryCancelSubmit)
        on(routes, Pages.admin, use: adminUsers)
        on(routes, Pages.adminUser, use: adminUser)
        on(routes, Pages.adminUnlock, use: adminUnlock)
        on(routes, Pages.adminResetMFA, use: adminResetMFA)
        on(routes, Pages.adminRecovery, use: adminRecovery)
        on(routes, Pages.adminRecoveryDecide, use: adminRecoveryDecide)
        on(routes, Pages.adminRecoveryDocument, use: adminRecoveryDocument)
        on(routes, Pages.adminAudit, use: adminAudit)
        on(routes, Pages.passkeySignIn, use: passkeySignIn)
    }

    /// Registers `handler` for `page` (the only way a page is registered). A form's body may
    /// hold a recovery document, so forms read up to that much.
    private func on(
        _ routes: any RoutesBuilder, _ page: Page, use handler: @escaping @Sendable (Request) async throws -> Response
    ) {
        let path = EndpointComponent.parse(page.path).map { component -> PathComponent in
            switch component {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
        let limit = ByteCount(value: (RecoveryDocument.maximumBytes / 3 + 1) * 4 + 64 * 1024)
        routes.on(
            HTTPMethod(rawValue: page.method.rawValue), path,
            body: page.method == .get ? .collect : .collect(maxSize: limit)
        ) { request in
            do {
                return try await handler(request)
            } catch let detour as Detour {
                return detour.response
            }
        }
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok,
            headers: [
                "Content-Type": type, "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=300",
            ], body: .init(string: text))
    }

    // MARK: Rendering

    /// A page for `request`: its header (with the visitor's links), `main`, the CSRF cookie
    /// when the browser has none.
    func render(
        _ request: Request, _ csrf: (token: String, cookie: HTTPCookies.Value?), title: String, main: Markup,
        visitor: BrowserSessions.Visitor?, status: HTTPResponseStatus = .ok, script: Bool = false
    ) -> Response {
        var nav = Markup.empty
        if let visitor {
            nav += link(Pages.accountSecurity)
            if visitor.user.isActiveAdmin, !visitor.mustSetUpFactor { nav += link(Pages.admin) }
            nav += """
                <form class="inline" method="post" action="\(Pages.signOut.href())">\(Self.csrfField(csrf.token))\
                <button type="submit" class="link">Sign out \(visitor.user.username)</button></form>
                """
        } else {
            nav += link(Pages.signIn)
            if registrationEnabled { nav += link(Pages.register) }
        }
        let response = Response.page(
            HTML.document(title: title, main: main, nav: nav, script: script), status: status)
        if let cookie = csrf.cookie { response.cookies[cookies.name(BrowserSessions.csrfCookie)] = cookie }
        return response
    }

    private func link(_ page: Page) -> Markup { "<a href=\"\(page.href())\">\(page.title)</a>" }

    /// `303 See Other` to `location` (a path of this server).
    static func redirect(_ location: String) -> Response {
        let response = Response(status: .seeOther)
        response.headers.replaceOrAdd(name: .location, value: location)
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }

    /// To the sign-in page, coming back to `request`'s page, its query included, after it.
    static func signInFirst(_ request: Request) -> Response {
        let page = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
        return redirect(
            Pages.signIn.href() + "?next=" + (page.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"))
    }

    /// Where to go after signing in: a path of this server only (never another site's).
    static func safeNext(_ next: String?) -> String? {
        guard let next, next.count <= 512, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
            !next.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else { return nil }
        return next
    }

    static func csrfField(_ token: String) -> Markup {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">"
    }

    /// A problem as the message a form shows above itself, each thing said once: the detail,
    /// the tries left (while there are some), and the wait when the detail does not say it
    /// already (counted down when under a minute). A form that shows its fields' errors at the
    /// fields (`fieldsShown`) says only that here; other forms get them in words.
    static func alert(_ problem: Problem, fieldsShown: Set<String> = []) -> Markup {
        var title = problem.title
        var text: Markup = "\(problem.detail ?? problem.title)"
        if problem.code == .validationFailed, let errors = problem.errors, !errors.isEmpty {
            title = "Check what you typed"
            if Set(errors.keys).isSubset(of: fieldsShown) {
                text = "Each field to fix says what is wrong, below."
            } else {
                text = errors.keys.sorted().map { (key: String) -> Markup in
                    "\(fieldWords[key] ?? key) \(errors[key] ?? "")."
                }.joined(separator: " ")
            }
        }
        if let attempts = problem.attemptsRemaining, attempts > 0 {
            text += attempts == 1 ? " 1 try left." : " \(attempts) tries left."
        }
        if let wait = problem.retryAfter, !(problem.detail ?? "").lowercased().contains("try again") {
            text +=
                wait < 60
                ? " Try again in <span data-countdown=\"\(wait)\">\(wait)</span> seconds."
                : " Try again in \(TimeInterval(wait).waitInWords)."
        }
        return """
            <div class="alert" role="alert" tabindex="-1" id="problem"><h2>\(title)</h2>\
            <p>\(text)</p></div>
            """
    }

    /// The API's field names as a person reads them.
    static let fieldWords: [String: String] = [
        "email": "Email", "username": "Username", "password": "Password", "newPassword": "New password",
        "currentPassword": "Current password", "code": "Code", "phoneNumber": "Phone number", "name": "Name",
        "message": "Message", "document": "Document", "credential": "Passkey", "method": "Method", "token": "Link",
        "decision": "Decision", "otpFlowId": "Sign-in", "account": "Email or username",
    ]

    static func note(_ text: String) -> Markup { "<p class=\"note\" role=\"status\">\(text)</p>" }

    /// One labelled input; `error` marks it invalid and says why, announced with it.
    static func field(
        _ label: String, name: String, type: String = "text", value: String = "", autocomplete: String? = nil,
        inputmode: String? = nil, required: Bool = true, error: String? = nil, hint: String? = nil,
        extra: Markup = .empty
    ) -> Markup {
        let id = "f-" + name
        var described: [String] = []
        var after = Markup.empty
        if let hint {
            described.append(id + "-hint")
            after += "<p class=\"hint\" id=\"\(id)-hint\">\(hint)</p>"
        }
        if let error {
            described.append(id + "-error")
            after += "<p class=\"field-error\" id=\"\(id)-error\">\(error)</p>"
        }
        var attributes: Markup = "id=\"\(id)\" name=\"\(name)\" type=\"\(type)\""
        if !value.isEmpty { attributes += " value=\"\(value)\"" }
        if let autocomplete { attributes += " autocomplete=\"\(autocomplete)\"" }
        if let inputmode { attributes += " inputmode=\"\(inputmode)\"" }
        if required { attributes += " required" }
        if error != nil { attributes += " aria-invalid=\"true\"" }
        if !described.isEmpty { attributes += " aria-describedby=\"\(described.joined(separator: " "))\"" }
        return
            "<div class=\"field\"><label for=\"\(id)\">\(label)</label>\(after)<input \(attributes)\(extra)></div>"
    }

    /// The visitor. Otherwise a `Detour` (answered where pages are registered): to the sign-in
    /// page, or, for a session a recovery pass began, to the security page until it has set up
    /// a factor (`RecoveryGate`'s rule).
    func signedIn(_ request: Request, settingUp: Bool = false) async throws -> BrowserSessions.Visitor {
        guard let visitor = try await browser.visitor(request) else {
            throw Detour(response: Self.signInFirst(request))
        }
        if visitor.mustSetUpFactor, !settingUp {
            throw Detour(response: Self.redirect(Pages.accountSecurity.href()))
        }
        return visitor
    }

    /// A refusal page: the problem in words, with its status.
    func refusal(
        _ request: Request, _ problem: Problem, visitor: BrowserSessions.Visitor?,
        next: (href: String, words: String)? = nil
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>\(problem.title)</h1>\n" + Self.alert(problem)
        let (href, words) = next ?? (Pages.signIn.href(), "Back to the start")
        main += "<p><a href=\"\(href)\">\(words)</a></p>"
        return render(
            request, csrf, title: problem.title, main: main, visitor: visitor,
            status: HTTPResponseStatus(statusCode: problem.status))
    }

    /// Reads a form; its CSRF token and origin checked first.
    func form<Form: Decodable & CSRFCarrying>(_ request: Request, as type: Form.Type) throws -> Form {
        let form: Form
        do {
            form = try request.content.decode(Form.self)
        } catch {
            // Checked before saying anything about the form itself.
            try browser.checkForm(request, token: nil)
            throw Problem(
                status: 422, code: .validationFailed, title: "Incomplete form",
                detail: "Some of the form's fields were missing. Go back, fill it in and send it again.")
        }
        try browser.checkForm(request, token: form.csrf)
        return form
    }
}

/// Where a page sends a visitor instead of showing itself (the sign-in page, a refusal).
struct Detour: Error, @unchecked Sendable {
    // Unchecked: a response made for this request and handed back to it, never shared.
    let response: Response
}

/// A form that carries its CSRF token in `csrf`.
protocol CSRFCarrying {
    var csrf: String? { get }
}

/// Date and time as a page shows them.
enum PageTime {
    static func text(_ date: Date?) -> String {
        guard let date else { return "never" }
        return FactorChanges.moment(date)
    }

    /// A moment as a page shows it: a `<time>` that says it in UTC, which the pages' script
    /// says again in the person's own time zone, and relatively when it is within a week
    /// ("in 5 minutes", "3 days ago"), the exact time kept as its title.
    static func shown(_ date: Date?) -> Markup {
        guard let date else { return "never" }
        return "<time datetime=\"\(machine(date))\" data-local>\(text(date))</time>"
    }

    /// For a `<time datetime>`: ISO 8601 in UTC.
    static func machine(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withInternetDateTime])
    }
}
