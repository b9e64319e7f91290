import Foundation
import TwofoldAPI
import Vapor

struct RenameForm: Content, CSRFCarrying {
    var csrf: String?
    var name: String?
}

struct CodesSetupForm: Content, CSRFCarrying {
    var csrf: String?
    var phoneNumber: String?
}

struct PasswordForm: Content, CSRFCarrying {
    var csrf: String?
    var currentPassword: String?
    var newPassword: String?
}

/// The security page's changes: each asks the same service, and so the same sign-in policy, as
/// its JSON endpoint; a change that needs a step-up shows "Confirm it's you" and comes back.
extension SecurityPages {
    /// Runs `action` for the signed-in visitor once the form checked out; its refusals shown on
    /// the security page, a step-up asked for first when the policy wants one.
    /// `confirm`, when given, is asked first (`confirmFirst`).
    func securityAction(
        _ request: Request, settingUp: Bool = false,
        confirm: ((BrowserSessions.Visitor) async throws -> Confirmation)? = nil,
        _ action: @escaping (BrowserSessions.Visitor) async throws -> Response
    ) async throws -> Response {
        _ = try form(request, as: CSRFOnlyForm.self)
        let visitor = try await signedIn(request, settingUp: settingUp)
        if let confirm,
            let page = confirmFirst(
                request, visitor: visitor, try await confirm(visitor), back: Pages.accountSecurity.href())
        {
            return page
        }
        do {
            return try await action(visitor)
        } catch let problem as Problem where problem.code == .stepUpRequired {
            return try await stepUps.stepUpPage(
                request, visitor: visitor, next: Pages.accountSecurity.href(), refusal: problem)
        } catch let problem as Problem where problem.status < 500 {
            return try await securityPage(
                request, visitor: visitor, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    /// Backup codes, shown once, with print and copy.
    func backupCodesPage(
        _ request: Request, visitor: BrowserSessions.Visitor, codes: [String], said: String
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = """
            <h1>Save your backup codes</h1>
            <p role="status">\(said)</p>
            <p>Each of these codes signs you in once if you lose your other sign-in methods. They are shown only \
            now: print them or keep them in a password manager.</p>
            <ul class="codes" id="codes">
            """
        for code in codes { main += "<li><code>\(code)</code></li>" }
        main += """
            </ul>
            <p><button type="button" class="secondary" data-copy="codes" hidden>Copy the codes</button> \
            <button type="button" class="secondary" data-print hidden>Print</button></p>
            <p><a class="button" href="\(Pages.accountSecurity.href())">I have saved these</a></p>
            """
        return render(request, csrf, title: "Save your backup codes", main: main, visitor: visitor)
    }

    @Sendable func totpRemove(request: Request) async throws -> Response {
        let confirmation = Confirmation(
            question: "Turn off the authenticator app?",
            detail: "Its codes will no longer sign you in. To use an app again, you set it up again, with a new code "
                + "to scan.",
            button: "Turn off the authenticator app")
        return try await securityAction(request, confirm: { _ in confirmation }) { visitor in
            try await factorSettings.removeTOTP(user: visitor.user, caller: visitor.caller, origin: request.origin)
            return try await securityPage(
                request, visitor: try await refreshed(visitor), notice: "The authenticator app was removed.")
        }
    }

    @Sendable func backupCodesRegenerate(request: Request) async throws -> Response {
        try await securityAction(request) { visitor in
            let codes = try await factorSettings.regenerateBackupCodes(
                user: visitor.user, caller: visitor.caller, origin: request.origin)
            return backupCodesPage(
                request, visitor: visitor, codes: codes.backupCodes,
                said: "New backup codes; the old ones stopped working.")
        }
    }

    @Sendable func passkeyRename(request: Request) async throws -> Response {
        let form = try form(request, as: RenameForm.self)
        return try await securityAction(request) { visitor in
            _ = try await passkeyManagement.rename(
                { try PasskeyService.credentialID(request.parameters.get("credentialID")) }, to: form.name ?? "",
                user: visitor.user, caller: visitor.caller)
            return try await securityPage(request, visitor: visitor, notice: "The passkey was renamed.")
        }
    }

    @Sendable func passkeyDelete(request: Request) async throws -> Response {
        let id = request.parameters.get("credentialID") ?? ""
        let confirm = { (visitor: BrowserSessions.Visitor) in
            let passkeys = try await factorSettings.status(of: visitor.user).webauthn.credentials
            let name = passkeys.first { $0.id == id }?.name ?? "this passkey"
            return Confirmation(
                question: "Delete the passkey “\(name)”?",
                detail: "It will no longer sign you in. Your device keeps it until you remove it there too.",
                button: "Delete the passkey")
        }
        return try await securityAction(request, confirm: confirm) { visitor in
            try await passkeyManagement.delete(
                try PasskeyService.credentialID(request.parameters.get("credentialID")), user: visitor.user,
                caller: visitor.caller, origin: request.origin)
            return try await securityPage(
                request, visitor: try await refreshed(visitor), notice: "The passkey was deleted.")
        }
    }

    private static func channel(_ request: Request) throws -> DeliveryChannel {
        switch request.parameters.get("channel") {
        case "sms": .sms
        case "email": .email
        default: throw Problem(status: 404, code: .notFound, title: "No such kind of code")
        }
    }

    /// Sends a code to turn SMS or email codes on, and asks for it.
    @Sendable func codesSetup(request: Request) async throws -> Response {
        let form = try form(request, as: CodesSetupForm.self)
        return try await securityAction(request, settingUp: true) { visitor in
            let channel = try Self.channel(request)
            let sent =
                channel == .sms
                ? try await factorSettings.setupSMS(
                    phoneNumber: form.phoneNumber.flatMap { $0.isEmpty ? nil : $0 }, user: visitor.user,
                    caller: visitor.caller)
                : try await factorSettings.setupEmail(user: visitor.user, caller: visitor.caller)
            return codesConfirmPage(
                request, visitor: visitor, channel: channel, sentTo: sent.maskedDestination, problem: nil)
        }
    }

    func codesConfirmPage(
        _ request: Request, visitor: BrowserSessions.Visitor, channel: DeliveryChannel, sentTo: String?,
        problem: Problem?
    ) -> Response {
        let csrf = browser.csrf(request)
        let what = channel == .sms ? "text message" : "email"
        var main: Markup = "<h1>Turn on \(channel == .sms ? "SMS" : "email") codes</h1>\n"
        if let problem { main += Self.alert(problem) }
        if let sentTo { main += "<p role=\"status\">We sent a code by \(what) to \(sentTo).</p>" }
        main += """
            <form method="post" action="\(Pages.codesConfirm.href(channel.rawValue))" novalidate>\(Self.csrfField(csrf.token))
            \(Self.field("Code from the \(what)", name: "code", autocomplete: "one-time-code", inputmode: "numeric", error: problem?.title))
            <button type="submit">Turn on</button></form>
            <p><a href="\(Pages.accountSecurity.href())">Cancel</a></p>
            """
        return render(
            request, csrf, title: "Turn on sign-in codes", main: main, visitor: visitor,
            status: problem.map { HTTPResponseStatus(statusCode: $0.status) } ?? .ok)
    }

    @Sendable func codesConfirm(request: Request) async throws -> Response {
        let form = try form(request, as: CodeForm.self)
        return try await securityAction(request, settingUp: true) { visitor in
            let channel = try Self.channel(request)
            do {
                let enabled = try await factorSettings.confirmCodes(
                    channel, code: form.code ?? "", user: visitor.user, caller: visitor.caller, origin: request.origin)
                let said = "\(channel == .sms ? "SMS" : "Email") codes are on."
                if let codes = enabled.backupCodes {
                    return backupCodesPage(request, visitor: visitor, codes: codes, said: said)
                }
                return try await securityPage(request, visitor: try await refreshed(visitor), notice: said)
            } catch let problem as Problem where problem.code == .invalidCode || problem.code == .alreadyUsed {
                return codesConfirmPage(request, visitor: visitor, channel: channel, sentTo: nil, problem: problem)
            }
        }
    }

    @Sendable func codesDisable(request: Request) async throws -> Response {
        let sms = request.parameters.get("channel") == "sms"
        let confirm = { (visitor: BrowserSessions.Visitor) in
            let destination = Self.maskedDestination(sms ? .sms : .email, of: visitor.user)
            return Confirmation(
                question: "Turn off \(sms ? "SMS" : "email") codes?",
                detail: "Codes will no longer be sent to \(destination ?? "you") to sign you in.",
                button: "Turn off \(sms ? "SMS" : "email") codes")
        }
        return try await securityAction(request, confirm: confirm) { visitor in
            let channel = try Self.channel(request)
            try await factorSettings.disableCodes(
                channel, user: visitor.user, caller: visitor.caller, origin: request.origin)
            return try await securityPage(
                request, visitor: try await refreshed(visitor),
                notice: "\(channel == .sms ? "SMS" : "Email") codes are off.")
        }
    }

    @Sendable func passwordChange(request: Request) async throws -> Response {
        let form = try form(request, as: PasswordForm.self)
        return try await securityAction(request) { visitor in
            try await accountChanges.changePassword(
                PasswordChangeRequest(currentPassword: form.currentPassword ?? "", newPassword: form.newPassword ?? ""),
                user: visitor.user, caller: visitor.caller, origin: request.origin)
            return try await securityPage(
                request, visitor: visitor,
                notice:
                    "Your password was changed; your other sessions were signed out and remembered devices forgotten.")
        }
    }

    /// The visitor as the account now stands (after a change to its factors).
    func refreshed(_ visitor: BrowserSessions.Visitor) async throws -> BrowserSessions.Visitor {
        guard let user = try await callers.existing(visitor.caller) else { return visitor }
        return BrowserSessions.Visitor(
            caller: visitor.caller, user: user, mustSetUpFactor: visitor.mustSetUpFactor, token: visitor.token)
    }
}
