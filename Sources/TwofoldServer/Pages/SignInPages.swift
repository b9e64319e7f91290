import Foundation
import TwofoldAPI
import Vapor

struct SignInForm: Content, CSRFCarrying {
    var csrf: String?
    var account: String?
    var password: String?
    var next: String?
}

struct SecondStepForm: Content, CSRFCarrying {
    var csrf: String?
    var flow: String?
    var method: String?
    var code: String?
    var trustDevice: String?
    var next: String?
    /// The methods the account offered, kept so a refusal can show the same choice again.
    var methods: String?
}

struct RegisterForm: Content, CSRFCarrying {
    var csrf: String?
    var username: String?
    var email: String?
    var password: String?
}

struct CSRFOnlyForm: Content, CSRFCarrying {
    var csrf: String?
}

extension SignInPages {
    // MARK: Sign in

    @Sendable func signInPage(request: Request) async throws -> Response {
        let next = Self.safeNext(try? request.query.get(String.self, at: "next"))
        if try await browser.visitor(request) != nil { return Self.redirect(next ?? Pages.accountSecurity.href()) }
        return signInForm(request, next: next)
    }

    func signInForm(
        _ request: Request, next: String?, account: String = "", problem: Problem? = nil,
        status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>Sign in</h1>\n"
        if let problem { main += Self.alert(problem) }
        if request.url.query == "reset=done" { main += Self.note("Your password is changed. Sign in with it.") }
        main += """
            <form method="post" action="\(Pages.signIn.form.href())" novalidate>
            \(Self.csrfField(csrf.token))\(Self.nextField(next))
            \(Self.field("Email or username", name: "account", value: account, autocomplete: "username webauthn", error: problem == nil ? nil : ""))
            \(Self.field("Password", name: "password", type: "password", autocomplete: "current-password"))
            <p class="hint"><a href="\(Pages.forgotPassword.href())">Forgot password?</a></p>
            <button type="submit">Sign in</button>
            </form>
            <div class="passkey" data-passkey-sign-in data-options="\(API.Passkeys.signInOptions.href())" hidden>
            <p>Or, with no password:</p>
            <button type="button" data-passkey-button>Sign in with a passkey</button>
            <p class="field-error" role="alert" data-passkey-error></p>
            \(Self.passkeyForm(Pages.passkeySignIn, carrying: Self.csrfField(csrf.token) + Self.nextField(next)))
            </div>
            <p><a href="\(Pages.recovery.href())">Lost access to every sign-in method? Recover your account</a></p>
            """
        return render(request, csrf, title: "Sign in", main: main, visitor: nil, status: status)
    }

    @Sendable func signInSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: SignInForm.self)
        let next = Self.safeNext(form.next)
        do {
            let outcome = try await signIn.start(
                LoginRequest(email: form.account ?? "", password: form.password ?? ""),
                from: request.signInSource(cookies), logger: request.logger)
            switch outcome {
            case .signedIn(let tokens):
                let response = Self.redirect(next ?? Pages.accountSecurity.href())
                browser.begin(tokens, on: response)
                return response
            case .secondStep(let challenge):
                // Whether `SignIn` sent the first method's code with the password (not over the
                // hourly limit), as the flow's codes say.
                let methods = challenge.availableMethods
                let chosen = methods.first { $0 != .webauthn }
                let sentMethod = try? await secondStep.sentCodeMethod(flow: challenge.otpFlowId)
                let sent = chosen != nil && sentMethod == chosen
                return secondStepPage(
                    request, flow: challenge.otpFlowId, methods: methods, chosen: chosen, next: next,
                    sentTo: chosen == .sms ? challenge.maskedPhone : chosen == .email ? challenge.maskedEmail : nil,
                    codeSent: sent, resendIn: sent ? Int(codeResendAfter) : nil)
            }
        } catch let problem as Problem where problem.status < 500 {
            return signInForm(
                request, next: next, account: form.account ?? "", problem: problem,
                status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    // MARK: The second step

    /// The second step: the methods the account has, passkey first; a code field for the chosen
    /// code method; remember this device; the fallback chain down to recovery.
    func secondStepPage(
        _ request: Request, flow: String, methods: [FactorMethod], chosen: FactorMethod?, next: String?,
        sentTo: String? = nil, codeSent: Bool = true, resendIn: Int? = nil, problem: Problem? = nil,
        status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        let codeMethods = methods.filter { [.totp, .sms, .email, .backup].contains($0) }
        let method = chosen.flatMap { codeMethods.contains($0) ? $0 : nil } ?? codeMethods.first
        let flowFields = Self.flowFields(csrf: csrf.token, next: next, flow: flow, methods: methods)
        var main: Markup = "<h1>Confirm it's you</h1>\n"
        if let problem { main += Self.alert(problem) }
        if methods.contains(.webauthn) {
            main += """
                <div class="passkey" data-passkey-flow="\(flow)" data-options="\(API.Passkeys.flowOptions.href())" hidden>
                <button type="button" data-passkey-button>Use your passkey</button>
                <p class="field-error" role="alert" data-passkey-error></p>
                \(Self.passkeyForm(Pages.passkeySignIn, carrying: flowFields + "<input type=\"hidden\" name=\"trustDevice\">"))
                </div>
                """
        }
        if methods.contains(.push) { main += Self.askPhoneForm(carrying: flowFields, main: method == nil) }
        // A wait the server asked for (a lockout, too many codes): the fields stay shut until it
        // ends (the script opens them then; without it, the page after the wait does).
        let wait = problem?.retryAfter.map { max(1, $0) }
        let shut: Markup = wait.map { (seconds: Int) -> Markup in " disabled data-until=\"\(seconds)\"" } ?? .empty
        if let method, method.isSentCode, !codeSent {
            // Not sent yet (another method comes first): the person asks for it.
            main += """
                <form method="post" action="\(Pages.resendCode.href())">\(Self.csrfField(csrf.token))\(Self.nextField(next))
                <input type="hidden" name="flow" value="\(flow)"><input type="hidden" name="method" value="\(method.rawValue)">
                <input type="hidden" name="methods" value="\(methods.map(\.rawValue).joined(separator: ","))">
                <button type="submit">Send a code \(method == .sms ? "by text message" : "by email")</button></form>
                """
        } else if let method {
            let label = Self.codeLabel(method, sentTo: sentTo)
            main += """
                <form method="post" action="\(Pages.secondStep.href())" novalidate>
                \(Self.csrfField(csrf.token))\(Self.nextField(next))
                <input type="hidden" name="flow" value="\(flow)">
                <input type="hidden" name="method" value="\(method.rawValue)">
                <input type="hidden" name="methods" value="\(methods.map(\.rawValue).joined(separator: ","))">
                \(Self.field(label, name: "code", autocomplete: "one-time-code", inputmode: method == .backup ? "text" : "numeric", error: problem == nil ? nil : problem?.title, extra: shut))
                \(rememberField)
                <button type="submit"\(shut)>Continue</button>
                </form>
                """
            if method.isSentCode {
                if let resendIn, resendIn > 0 {
                    main += """
                        <p class="hint" role="status">A code went to \(sentTo ?? "you"). You can ask \
                        for another in <span data-countdown="\(resendIn)">\(resendIn)</span> seconds.</p>
                        """
                }
                main += """
                    <form method="post" action="\(Pages.resendCode.href())">\(Self.csrfField(csrf.token))\(Self.nextField(next))
                    <input type="hidden" name="flow" value="\(flow)"><input type="hidden" name="method" value="\(method.rawValue)">
                    <input type="hidden" name="methods" value="\(methods.map(\.rawValue).joined(separator: ","))">
                    <button type="submit" class="secondary">Send another code</button></form>
                    """
            }
        }
        let carried = flowFields
        // SMS and email go to the resend form, which sends their code; the others show their field.
        main += Self.otherWays(codeMethods.filter { $0 != method }, carrying: carried) {
            $0.isSentCode ? Pages.resendCode.href() : Pages.secondStep.href()
        }
        main += "<p><a href=\"\(Pages.recovery.href())\">Lost every sign-in method? Recover your account</a></p>"
        return render(request, csrf, title: "Confirm it's you", main: main, visitor: nil, status: status)
    }

    @Sendable func secondStepSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: SecondStepForm.self)
        let next = Self.safeNext(form.next)
        let methods = (form.methods ?? "").split(separator: ",").map { FactorMethod(rawValue: String($0)) }
        let method = FactorMethod(rawValue: form.method ?? "")
        let flow = form.flow ?? ""
        // Choosing another method shows its field; nothing is checked yet.
        if (try? request.content.get(String.self, at: "switch")) == "1" {
            return secondStepPage(request, flow: flow, methods: methods, chosen: method, next: next)
        }
        do {
            let trust = form.trustDevice == "on"
            let signedIn: SecondStep.SignedIn
            if method.isSentCode {
                signedIn = try await secondStep.completeWithSentCode(
                    flow: flow, code: form.code ?? "", trustDevice: trust, origin: request.origin,
                    on: request.eventLoop)
            } else {
                guard [.totp, .backup].contains(method) else {
                    throw InputValidation.failure(["method": "must be totp, sms, email or backup"])
                }
                signedIn = try await secondStep.complete(
                    .init(flow: flow, method: method, code: form.code, trustDevice: trust), origin: request.origin,
                    on: request.eventLoop)
            }
            return signedInResponse(signedIn, next: next)
        } catch let problem as Problem where problem.status < 500 {
            return secondStepRefusal(problem, request, flow: flow, methods: methods, chosen: method, next: next)
        }
    }

    /// A second step done: the session's cookies (and a remembered device's), then `next`.
    func signedInResponse(_ signedIn: SecondStep.SignedIn, next: String?) -> Response {
        let response = Self.redirect(next ?? Pages.accountSecurity.href())
        browser.begin(signedIn.answer.tokens, on: response)
        if let deviceToken = signedIn.trustedDeviceToken {
            response.cookies[cookies.trustedDevice] = cookies.cookie(deviceToken, lifetime: trustedDeviceLifetime)
        }
        return response
    }

    /// A second step refused: the same step again with the refusal; or, when the flow itself is
    /// over (expired, used, locked out), back to the password.
    func secondStepRefusal(
        _ problem: Problem, _ request: Request, flow: String, methods: [FactorMethod], chosen: FactorMethod?,
        next: String?
    ) -> Response {
        let status = HTTPResponseStatus(statusCode: problem.status)
        if problem.errors?["otpFlowId"] != nil || problem.code == .unauthorized {
            return signInForm(request, next: next, problem: problem, status: status)
        }
        return secondStepPage(
            request, flow: flow, methods: methods, chosen: chosen, next: next, problem: problem, status: status)
    }

    @Sendable func resendCode(request: Request) async throws -> Response {
        let form = try form(request, as: SecondStepForm.self)
        let next = Self.safeNext(form.next)
        let methods = (form.methods ?? "").split(separator: ",").map { FactorMethod(rawValue: String($0)) }
        let method = FactorMethod(rawValue: form.method ?? "")
        let flow = form.flow ?? ""
        do {
            let sent = try await secondStep.resendCode(flow: flow, method: method)
            return secondStepPage(
                request, flow: flow, methods: methods, chosen: method, next: next, sentTo: sent.maskedDestination,
                resendIn: waitFor(sent))
        } catch let problem as Problem where problem.status < 500 {
            return secondStepPage(
                request, flow: flow, methods: methods, chosen: method, next: next, problem: problem,
                status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    // MARK: Registration

    @Sendable func registerPage(request: Request) async throws -> Response {
        guard registrationEnabled else { return refusal(request, Self.registrationClosed, visitor: nil) }
        return registerForm(request)
    }

    static let registrationClosed = Problem(
        status: 404, code: .notFound, title: "Registration is closed",
        detail: "This server does not take new accounts. Ask its administrator for one.")

    func registerForm(
        _ request: Request, form: RegisterForm? = nil, problem: Problem? = nil, status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>Create an account</h1>\n"
        if let problem { main += Self.alert(problem, fieldsShown: ["username", "email", "password"]) }
        let errors = problem?.errors ?? [:]
        main += """
            <form method="post" action="\(Pages.register.form.href())" novalidate>
            \(Self.csrfField(csrf.token))
            \(Self.field("Username", name: "username", value: form?.username ?? "", autocomplete: "username", error: errors["username"], hint: "3 to 32 letters, digits, dots, dashes or underscores."))
            \(Self.field("Email address", name: "email", type: "email", value: form?.email ?? "", autocomplete: "email", error: errors["email"]))
            \(Self.field("Password", name: "password", type: "password", autocomplete: "new-password", error: errors["password"], hint: "At least 8 characters; not a common password."))
            <button type="submit">Create account</button>
            </form>
            """
        return render(request, csrf, title: "Create an account", main: main, visitor: nil, status: status)
    }

    @Sendable func registerSubmit(request: Request) async throws -> Response {
        guard registrationEnabled else { return refusal(request, Self.registrationClosed, visitor: nil) }
        let form = try form(request, as: RegisterForm.self)
        do {
            let source = request.signInSource(cookies)
            _ = try await registration.register(
                RegisterRequest(username: form.username ?? "", email: form.email ?? "", password: form.password ?? ""),
                from: source)
            // Signed in at once with what was just registered (the account has no factor yet).
            let outcome = try await signIn.start(
                LoginRequest(username: form.username ?? "", password: form.password ?? ""), from: source,
                logger: request.logger)
            guard case .signedIn(let tokens) = outcome else { return Self.redirect(Pages.signIn.href()) }
            let response = Self.redirect(Pages.accountSecurity.href())
            browser.begin(tokens, on: response)
            return response
        } catch let problem as Problem where problem.status < 500 {
            var kept = form
            kept.password = nil
            return registerForm(
                request, form: kept, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
        }
    }
}
