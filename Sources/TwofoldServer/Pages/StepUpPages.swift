import Foundation
import TwofoldAPI
import Vapor

/// Signing out, and "Confirm it's you" (step-up): the proofs a change asks for, offered in
/// the order the account can give them.
struct StepUpForm: Content, CSRFCarrying {
    var csrf: String?
    var method: String?
    var password: String?
    var code: String?
    var next: String?
    /// What the policy asked for (`SignInNeed`), kept across the page's forms.
    var need: String?
    /// `1`: show `method`'s field instead, checking nothing.
    var `switch`: String?
    /// `1`: send a code by `method` (SMS or email) to step up with.
    var send: String?
    /// A passkey's answer (`method` `webauthn`), as the page's script put it in.
    var credential: String?
    /// The request the phone approved (`method` `push`), and the number the page showed.
    var requestId: String?
    var number: String?
    /// The change the step-up was asked for, made once it is done (`PendingChange`).
    var then: String?
    var thenFields: String?
}

extension StepUpPages {
    // MARK: Sign out and step up

    @Sendable func signOutSubmit(request: Request) async throws -> Response {
        _ = try form(request, as: CSRFOnlyForm.self)
        let response = Self.redirect(Pages.signIn.href())
        if let visitor = try await browser.visitor(request) {
            try await browser.end(visitor, request: request, on: response)
        } else {
            browser.clear(on: response)
        }
        return response
    }

    /// "Confirm it's you" for a change the policy asked a step-up for: every way the account can
    /// prove it on this session, passkey first, then one code method at a time (the others a
    /// click away; an SMS or email code is sent when asked for), and the password where it is
    /// what the change needs. `need` is the policy's (`SignInNeed`), kept across the page's forms.
    func stepUpPage(
        _ request: Request, visitor: BrowserSessions.Visitor, next: String, problem: Problem?, need: String? = nil,
        chosen: FactorMethod? = nil, codeSent: Bool = false, resendIn: Int? = nil, pending: PendingChange? = nil
    ) async throws -> Response {
        let csrf = browser.csrf(request)
        let user = visitor.user
        let available = try await factorSettings.secondFactors.available(for: user)
        let codeMethods = available.filter { [.totp, .sms, .email, .backup].contains($0) }
        let method = chosen.flatMap { codeMethods.contains($0) ? $0 : nil } ?? codeMethods.first
        let need = need.flatMap(SignInNeed.init(rawValue:))
        let hidden: Markup =
            Self.csrfField(csrf.token) + Self.nextField(next)
            + (need.map { "<input type=\"hidden\" name=\"need\" value=\"\($0.rawValue)\">" } ?? "")
            + (pending?.hiddenFields ?? "")
        var main: Markup = "<h1>Confirm it's you</h1>\n"
        if let problem { main += Self.alert(problem) }
        let why =
            switch need {
            case .recentPassword?: "This change needs your password again."
            case .recentSecondFactor?: "This change needs a sign-in method you already had: confirm with one of them."
            case .otherProof?: "Removing a sign-in method needs another one, or your password and a code."
            case .moreThanACode?: "You signed in with a code alone: confirm with your password or another method."
            default: "This change needs a recent proof that it is you."
            }
        let then = pending.map { "Once you have, \($0.words)." } ?? "Then make the change again."
        main += "<p>\(why) \(then)</p>"
        if available.contains(.webauthn) {
            main += """
                <div class="passkey" data-passkey-step-up data-options="\(API.Auth.stepUpPasskeyOptions.href())" hidden>
                <button type="button" data-passkey-button>Use your passkey</button>
                <p class="field-error" role="alert" data-passkey-error></p>
                \(Self.passkeyForm(Pages.stepUp, carrying: hidden + "<input type=\"hidden\" name=\"method\" value=\"webauthn\">"))
                </div>
                """
        }
        if available.contains(.deviceKey) {
            main += """
                <form method="post" action="\(Pages.stepUpPhone.href())">\(hidden)
                <button type="submit"\(available.contains(.webauthn) ? " class=\"secondary\"" : "")>Approve on your phone</button>
                <p class="hint">Your phone with Twofold asks you to pick the number this page shows.</p></form>
                """
        }
        if let method {
            let destination = Self.maskedDestination(method, of: user)
            if method.isSentCode, !codeSent {
                main += """
                    <form method="post" action="\(Pages.stepUp.href())">\(hidden)
                    <input type="hidden" name="method" value="\(method.rawValue)"><input type="hidden" name="send" value="1">
                    <button type="submit">Send a code \(method == .sms ? "by text message" : "by email") to \(destination ?? "you")</button></form>
                    """
            } else {
                let label = Self.codeLabel(method, sentTo: destination)
                main += """
                    <form method="post" action="\(Pages.stepUp.href())" novalidate>\(hidden)
                    <input type="hidden" name="method" value="\(method.rawValue)">
                    \(Self.field(label, name: "code", autocomplete: "one-time-code", inputmode: method == .backup ? "text" : "numeric"))
                    <button type="submit">Confirm</button></form>
                    """
                if let resendIn, resendIn > 0 {
                    main += """
                        <p class="hint" role="status">A code went to \(destination ?? "you"). You can ask \
                        for another in <span data-countdown="\(resendIn)">\(resendIn)</span> seconds.</p>
                        """
                }
                if method.isSentCode {
                    main += """
                        <form method="post" action="\(Pages.stepUp.href())">\(hidden)
                        <input type="hidden" name="method" value="\(method.rawValue)"><input type="hidden" name="send" value="1">
                        <button type="submit" class="secondary">Send another code</button></form>
                        """
                }
            }
        }
        main += Self.otherWays(codeMethods.filter { $0 != method }, carrying: hidden) { _ in Pages.stepUp.href() }
        // The password where it is what the change needs (or half of it), or all the account has;
        // never where only a second factor will do, which would send the person round in a loop.
        if available.isEmpty || need != .recentSecondFactor {
            main += """
                <h2>\(available.isEmpty ? "Your password" : "Or your password")</h2>
                <form method="post" action="\(Pages.stepUp.href())" novalidate>\(hidden)
                <input type="hidden" name="method" value="password">
                \(Self.field("Password", name: "password", type: "password", autocomplete: "current-password"))
                <button type="submit">Confirm</button></form>
                """
        }
        return render(
            request, csrf, title: "Confirm it's you", main: main, visitor: visitor, status: .forbidden)
    }

    /// The step-up page for a change the policy refused with `problem` (`step_up_required`): the
    /// change `request` made is made once the step-up is done.
    func stepUpPage(_ request: Request, visitor: BrowserSessions.Visitor, next: String, refusal problem: Problem)
        async throws -> Response
    {
        try await stepUpPage(
            request, visitor: visitor, next: next, problem: nil, need: problem.errors?["stepUp"],
            pending: request.method == .POST ? PendingChange(refused: request) : nil)
    }

    /// `GET /step-up?next=…`: where the pages' script sends a person whose change the policy
    /// refused (`need` names what it asked for).
    @Sendable func stepUpShow(request: Request) async throws -> Response {
        let visitor = try await signedIn(request)
        let next = Self.safeNext(try? request.query.get(String.self, at: "next")) ?? Pages.accountSecurity.href()
        return try await stepUpPage(
            request, visitor: visitor, next: next, problem: nil, need: try? request.query.get(String.self, at: "need"))
    }

    @Sendable func stepUpSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: StepUpForm.self)
        let visitor = try await signedIn(request)
        let next = Self.safeNext(form.next) ?? Pages.accountSecurity.href()
        let method = FactorMethod(rawValue: form.method ?? "password")
        let pending = PendingChange(then: form.then, fields: form.thenFields)
        // Choosing another method shows its field; nothing is checked yet.
        if form.switch == "1" {
            return try await stepUpPage(
                request, visitor: visitor, next: next, problem: nil, need: form.need, chosen: method, pending: pending)
        }
        if form.send == "1" {
            do {
                let sent = try await stepUp.sendCode(method, to: visitor.user)
                return try await stepUpPage(
                    request, visitor: visitor, next: next, problem: nil, need: form.need, chosen: method,
                    codeSent: true, resendIn: waitFor(sent), pending: pending)
            } catch let problem as Problem where problem.status < 500 {
                // A code asked for inside the cooldown: the one sent before still works.
                return try await stepUpPage(
                    request, visitor: visitor, next: next, problem: problem, need: form.need, chosen: method,
                    codeSent: problem.code == .rateLimited, pending: pending)
            }
        }
        do {
            let credential =
                method == .webauthn ? try Self.passkeyAnswer(form.credential, as: AuthenticationCredential.self) : nil
            _ = try await stepUp.prove(
                StepUpRequest(
                    method: method, code: form.code, credential: credential, password: form.password,
                    requestId: form.requestId),
                caller: visitor.caller, origin: request.origin)
            if let pending { return try await resume(pending, after: request, csrf: form.csrf ?? "") }
            return Self.redirect(next)
        } catch let problem as Problem where problem.status < 500 {
            // Not approved yet: the same wait again.
            if method == .push, problem.code == .conflict, let requestID = form.requestId,
                let number = Int(form.number ?? "")
            {
                return phoneWaitPage(
                    request, visitor: visitor, form: form, next: next, requestID: requestID, number: number,
                    problem: problem)
            }
            return try await stepUpPage(
                request, visitor: visitor, next: next, problem: problem, need: form.need,
                chosen: [.password, .webauthn, .push].contains(method) ? nil : method, codeSent: method.isSentCode,
                pending: pending)
        }
    }

    /// Asks the phone to approve this step-up, then shows the number to pick there while the page
    /// waits; refused (the budget, a pause, no phone), "Confirm it's you" with why.
    @Sendable func stepUpPhone(request: Request) async throws -> Response {
        let form = try form(request, as: StepUpForm.self)
        let visitor = try await signedIn(request)
        let next = Self.safeNext(form.next) ?? Pages.accountSecurity.href()
        do {
            let started = try await stepUp.askPhone(caller: visitor.caller, origin: request.origin)
            return phoneWaitPage(
                request, visitor: visitor, form: form, next: next, requestID: started.requestId,
                number: started.number)
        } catch let problem as Problem where problem.status < 500 {
            return try await stepUpPage(
                request, visitor: visitor, next: next, problem: problem, need: form.need,
                pending: PendingChange(then: form.then, fields: form.thenFields))
        }
    }

    /// "Pick this number on your phone" for a step-up: the script asks the server (a long poll)
    /// and posts the form when the phone approves; without script, the button does.
    private func phoneWaitPage(
        _ request: Request, visitor: BrowserSessions.Visitor, form: StepUpForm, next: String, requestID: String,
        number: Int, problem: Problem? = nil
    ) -> Response {
        let csrf = browser.csrf(request)
        let pending = PendingChange(then: form.then, fields: form.thenFields)
        let hidden: Markup =
            Self.csrfField(csrf.token) + Self.nextField(next)
            + (form.need.flatMap(SignInNeed.init(rawValue:)).map {
                "<input type=\"hidden\" name=\"need\" value=\"\($0.rawValue)\">"
            } ?? "") + (pending?.hiddenFields ?? "")
        var main: Markup = "<h1>Confirm it's you</h1>\n"
        if let problem { main += Self.alert(problem) }
        main += """
            <p>Open Twofold on your phone and pick this number:</p>
            <p class="push-number">\(String(number))</p>
            <div data-push-wait data-status="\(API.Push.stepUpStatus.href())" data-request="\(requestID)" \
            data-approved="Approved. Going on…">
            <p role="status" data-push-state>Waiting for your phone…</p>
            <form method="post" action="\(Pages.stepUp.href())" data-push-complete>\(hidden)
            <input type="hidden" name="method" value="push"><input type="hidden" name="requestId" value="\(requestID)">
            <input type="hidden" name="number" value="\(String(number))">
            <button type="submit">I approved it, continue</button></form>
            </div>
            <form method="post" action="\(Pages.stepUp.href())">\(hidden)<input type="hidden" name="switch" value="1">
            <button type="submit" class="secondary">Use another way</button></form>
            """
        return render(request, csrf, title: "Confirm it's you", main: main, visitor: visitor, status: .forbidden)
    }
}
