import Foundation
import TwofoldAPI
import Vapor

/// What every page needs, whatever its area: the browser's session and forms, the clock, and
/// whether registration is open.
struct PageKit: Sendable {
    let browser: BrowserSessions
    let cookies: CookieRules
    let clock: ServerClock
    let registrationEnabled: Bool
}

/// One area of the pages (sign-in, step-up, security, password, recovery, administration): a
/// type of its own holding the services its pages use, and the kit they all share. Its pages
/// reach services only, never stores.
protocol PageArea: Sendable {
    var kit: PageKit { get }
}

extension PageArea {
    var browser: BrowserSessions { kit.browser }
    var cookies: CookieRules { kit.cookies }
    var clock: ServerClock { kit.clock }
    var registrationEnabled: Bool { kit.registrationEnabled }

    // MARK: Rendering

    /// A page for `request`: its header (with the visitor's links), `main`, the CSRF cookie
    /// when the browser has none.
    func render(
        _ request: Request, _ csrf: (token: String, cookie: HTTPCookies.Value?), title: String, main: Markup,
        visitor: BrowserSessions.Visitor?, status: HTTPResponseStatus = .ok
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
            HTML.document(title: title, main: main, nav: nav, script: true, now: clock.now()), status: status)
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
                    let said = "\(fieldWords[key] ?? key) \(errors[key] ?? "")"
                    return "\(said.hasSuffix(".") ? said : said + ".")"
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
    static var fieldWords: [String: String] {
        [
            "email": "Email", "username": "Username", "password": "Password", "newPassword": "New password",
            "currentPassword": "Current password", "code": "Code", "phoneNumber": "Phone number", "name": "Name",
            "message": "Message", "document": "Document", "credential": "Passkey", "method": "Method", "token": "Link",
            "decision": "Decision", "otpFlowId": "Sign-in", "account": "Email or username",
        ]
    }

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

    /// The form a passkey box's script fills with the passkey's answer and sends to `page`.
    static func passkeyForm(_ page: Page, carrying fields: Markup) -> Markup {
        """
        <form method="post" action="\(page.href())" data-passkey-form hidden>\(fields)\
        <input type="hidden" name="credential"></form>
        """
    }

    static func nextField(_ next: String?) -> Markup {
        guard let next else { return .empty }
        return "<input type=\"hidden\" name=\"next\" value=\"\(next)\">"
    }

    /// "Other ways": a button for each of `methods`, each its own form to `action(method)` with
    /// `carried` (the page's hidden fields), `method` and `switch=1`.
    static func otherWays(_ methods: [FactorMethod], carrying carried: Markup, action: (FactorMethod) -> String)
        -> Markup
    {
        guard !methods.isEmpty else { return .empty }
        var html: Markup = "<h2>Other ways</h2><ul class=\"others\">"
        for other in methods {
            let name =
                switch other {
                case .totp: "Use your authenticator app"
                case .sms: "Get a code by text message"
                case .email: "Get a code by email"
                default: "Use a backup code"
                }
            html += """
                <li><form method="post" action="\(action(other))">\(carried)\
                <input type="hidden" name="method" value="\(other.rawValue)"><input type="hidden" name="switch" value="1">\
                <button type="submit" class="link">\(name)</button></form></li>
                """
        }
        return html + "</ul>"
    }

    /// The seconds until another code may be asked for, after `sent`, by the server's clock.
    func waitFor(_ sent: CodeSentResponse) -> Int {
        max(0, Int(sent.nextAllowedAt.timeIntervalSince(clock.now()).rounded(.up)))
    }

    /// Where `method`'s codes go for `user`, masked; `nil` for a method that sends none.
    static func maskedDestination(_ method: FactorMethod, of user: User) -> String? {
        DeliveryChannel(method).flatMap { channel in
            user.destination(for: channel).map { Masking.destination($0, channel: channel) }
        }
    }

    /// The label of a code field for `method`, naming where an SMS or email code went.
    static func codeLabel(_ method: FactorMethod, sentTo destination: String?) -> String {
        let to = destination.map { " to \($0)" } ?? ""
        return switch method {
        case .totp: "Code from your authenticator app"
        case .sms: "Code sent by text message" + to
        case .email: "Code sent by email" + to
        default: "Backup code"
        }
    }

    /// The credential a form carries in `credential` (JSON), or a 422 naming the field. Bounded
    /// before it is read: a passkey's answer is a few kilobytes.
    static func passkeyAnswer<Credential: Decodable>(_ json: String?, as type: Credential.Type) throws -> Credential {
        guard let json, json.utf8.count <= 64 * 1024,
            let credential = try? Wire.decoder().decode(Credential.self, from: Data(json.utf8))
        else {
            throw InputValidation.failure(["credential": "is not a passkey's answer. Try the passkey again."])
        }
        return credential
    }

    /// The page that asks `confirmation` before `request`'s change, when its form did not say
    /// `confirmed=1` yet; `nil` once it did. Cancel goes back to `back`.
    func confirmFirst(
        _ request: Request, visitor: BrowserSessions.Visitor, _ confirmation: Confirmation, back: String
    ) -> Response? {
        if (try? request.content.get(String.self, at: "confirmed")) == "1" { return nil }
        let csrf = browser.csrf(request)
        var kept = Markup.empty
        for name in PendingChange.carried.sorted() where name != "confirmed" {
            if let value = try? request.content.get(String.self, at: name) {
                kept += "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">"
            }
        }
        let main: Markup = """
            <h1>\(confirmation.question)</h1>
            <p>\(confirmation.detail)</p>
            <form method="post" action="/\(request.routedPath)">\(Self.csrfField(csrf.token))\(kept)\
            <input type="hidden" name="confirmed" value="1">\
            <button type="submit" class="danger">\(confirmation.button)</button> \
            <a class="button secondary" href="\(back)">Cancel</a></form>
            """
        return render(request, csrf, title: confirmation.question, main: main, visitor: visitor)
    }
}
