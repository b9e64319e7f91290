import Foundation
import TwofoldAPI
import Vapor

struct RecoveryStartForm: Content, CSRFCarrying {
    var csrf: String?
    var email: String?
    var message: String?
    var document: File?
}

struct TokenForm: Content, CSRFCarrying {
    var csrf: String?
    var token: String?
}

extension RecoveryPages {
    @Sendable func recoveryPage(request: Request) async throws -> Response {
        recoveryForm(request, form: nil, problem: nil)
    }

    func recoveryForm(
        _ request: Request, form: RecoveryStartForm?, problem: Problem?, status: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        let errors = problem?.errors ?? [:]
        var main: Markup = """
            <h1>Account recovery</h1>
            <p>If you lost every way to sign in (your phone, your passkeys and your backup codes), ask to recover \
            your account. We send a code to your email address; then an administrator reviews the request, which \
            can take a day or two. If it is approved, a link to sign in once reaches your email, and you set up a \
            new sign-in method.</p>
            """
        if let problem { main += Self.alert(problem) }
        let messageError = errors["message"]
        func fieldError(_ id: String, _ text: String?) -> Markup {
            text.map { "<p class=\"field-error\" id=\"\(id)\">\($0)</p>" } ?? .empty
        }
        let messageInvalid: Markup =
            messageError == nil ? .empty : " aria-invalid=\"true\" aria-describedby=\"f-message-error\""
        main += """
            <form method="post" action="\(Pages.recovery.form.href())" enctype="multipart/form-data" novalidate>
            \(Self.csrfField(csrf.token))
            \(Self.field("Your account's email address", name: "email", type: "email", value: form?.email ?? "", autocomplete: "email", error: errors["email"]))
            <div class="field"><label for="f-message">What happened, and anything that helps us recognise you</label>\
            \(fieldError("f-message-error", messageError))\
            <textarea id="f-message" name="message" rows="5" maxlength="\(RecoveryStartRequest.maximumMessageLength)"\
            \(messageInvalid)>\(form?.message ?? "")</textarea></div>
            <div class="field"><label for="f-document">A photo of an identity document (optional)</label>\
            <p class="hint" id="f-document-hint">JPEG, PNG or PDF, at most 2 MB. It is kept encrypted and deleted when \
            the request is decided.</p>\
            \(fieldError("f-document-error", errors["document"]))\
            <input id="f-document" name="document" type="file" accept="image/jpeg,image/png,application/pdf" \
            aria-describedby="f-document-hint\(errors["document"] == nil ? "" : " f-document-error")"></div>
            <button type="submit">Start recovery</button>
            </form>
            """
        return render(request, csrf, title: "Account recovery", main: main, visitor: nil, status: status)
    }

    @Sendable func recoveryStart(request: Request) async throws -> Response {
        let form = try form(request, as: RecoveryStartForm.self)
        var document: RecoveryDocument?
        if let file = form.document, file.data.readableBytes > 0 {
            let type = file.contentType.map { "\($0.type)/\($0.subType)" } ?? "application/octet-stream"
            document = RecoveryDocument(contentType: type, data: Data(buffer: file.data).base64EncodedString())
        }
        do {
            let started = try await recovery.start(
                RecoveryStartRequest(email: form.email ?? "", message: form.message, document: document),
                origin: request.origin)
            return Self.redirect(Pages.recoveryStatus.href(started.recoveryId.uuidString))
        } catch let problem as Problem where problem.status < 500 {
            var kept = form
            kept.document = nil
            return recoveryForm(
                request, form: kept, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    @Sendable func recoveryStatusPage(request: Request) async throws -> Response {
        do {
            let status = try await recovery.status(request.parameters.get("recoveryID", as: UUID.self))
            return recoveryStatusPage(request, status: status, problem: nil)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil)
        }
    }

    func recoveryStatusPage(
        _ request: Request, status: RecoveryStatus, problem: Problem?, code: HTTPResponseStatus = .ok
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>Your recovery request</h1>\n"
        if let problem { main += Self.alert(problem) }
        let words: String
        switch status.state {
        case .pendingEmail:
            words =
                "If an account has this email address, we sent it a code. Enter it here before "
                + "\(PageTime.text(status.expiresAt))."
        case .pendingReview: words = "Your email address is confirmed. An administrator will review your request."
        case .approved:
            words =
                "Approved. A link to sign in once went to your email address; it works until \(PageTime.text(status.expiresAt))."
        case .denied: words = "Denied after review. Contact your administrator."
        case .completed: words = "Done: you signed in with the recovery link."
        case .cancelled: words = "Cancelled."
        case .expired: words = "Expired. Start recovery again if you still need it."
        }
        main += "<p role=\"status\">\(words)</p>"
        if status.state == .pendingEmail {
            main += """
                <form method="post" action="\(Pages.recoveryVerify.href(status.recoveryId.uuidString))" novalidate>\
                \(Self.csrfField(csrf.token))
                \(Self.field("Code from the email", name: "code", autocomplete: "one-time-code", inputmode: "numeric", error: problem?.title))
                <button type="submit">Confirm</button></form>
                """
        }
        main += "<p>Keep this page's address to come back to it.</p>"
        return render(request, csrf, title: "Your recovery request", main: main, visitor: nil, status: code)
    }

    @Sendable func recoveryVerify(request: Request) async throws -> Response {
        let form = try form(request, as: CodeForm.self)
        let id = request.parameters.get("recoveryID", as: UUID.self)
        do {
            _ = try await recovery.proveEmail(id, code: form.code ?? "", origin: request.origin)
            return Self.redirect(Pages.recoveryStatus.href(id?.uuidString ?? ""))
        } catch let problem as Problem where problem.status < 500 && problem.status != 404 {
            return recoveryStatusPage(
                request, status: try await recovery.status(id), problem: problem,
                code: HTTPResponseStatus(statusCode: problem.status))
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil)
        }
    }

    /// The pass's link: a button, so that a mail scanner opening links spends nothing.
    @Sendable func recoveryPassPage(request: Request) async throws -> Response {
        let csrf = browser.csrf(request)
        let token = (try? request.query.get(String.self, at: "token")) ?? ""
        let main: Markup = """
            <h1>Recover your account</h1>
            <p>Signing in with this link removes every sign-in method of your account and signs out every session. \
            You then set up a new sign-in method.</p>
            <form method="post" action="\(Pages.recoveryPass.form.href())">\(Self.csrfField(csrf.token))\
            <input type="hidden" name="token" value="\(token)">
            <button type="submit">Sign in and set up a new method</button></form>
            """
        return render(request, csrf, title: "Recover your account", main: main, visitor: nil)
    }

    @Sendable func recoveryPassSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: TokenForm.self)
        do {
            let tokens = try await recovery.redeem(pass: form.token ?? "", origin: request.origin)
            let response = Self.redirect(Pages.accountSecurity.href())
            browser.begin(tokens, on: response)
            return response
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil)
        }
    }

    @Sendable func recoveryCancelPage(request: Request) async throws -> Response {
        let csrf = browser.csrf(request)
        let token = (try? request.query.get(String.self, at: "token")) ?? ""
        let main: Markup = """
            <h1>Cancel account recovery</h1>
            <p>If you did not ask to recover your account, cancel the request. If the recovery already happened, \
            your account is locked until an administrator looks at it with you.</p>
            <form method="post" action="\(Pages.recoveryCancel.form.href())">\(Self.csrfField(csrf.token))\
            <input type="hidden" name="token" value="\(token)">
            <button type="submit">This wasn't me: cancel it</button></form>
            """
        return render(request, csrf, title: "Cancel account recovery", main: main, visitor: nil)
    }

    @Sendable func recoveryCancelSubmit(request: Request) async throws -> Response {
        let form = try form(request, as: TokenForm.self)
        do {
            let status = try await recovery.cancel(token: form.token ?? "", origin: request.origin)
            let csrf = browser.csrf(request)
            let words =
                status.state == .completed
                ? "The recovery had already been used. Your account is now locked and every session signed out; an administrator will contact you."
                : "The recovery request is \(status.state == .cancelled ? "cancelled" : status.state.rawValue.replacingOccurrences(of: "_", with: " ")). Nothing else changed."
            return render(
                request, csrf, title: "Cancel account recovery",
                main: "<h1>Cancel account recovery</h1><p role=\"status\">\(words)</p>", visitor: nil)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: nil)
        }
    }
}
