import Foundation
import TwofoldAPI
import TwofoldCore
import Vapor

struct CodeForm: Content, CSRFCarrying {
    var csrf: String?
    var code: String?
}

extension SecurityPages {
    /// Seed 000's settings hub: where the account stands, and each way in with its actions.
    @Sendable func securityPage(request: Request) async throws -> Response {
        let visitor = try await signedIn(request, settingUp: true)
        return try await securityPage(request, visitor: visitor)
    }

    func securityPage(
        _ request: Request, visitor: BrowserSessions.Visitor, problem: Problem? = nil, notice: String? = nil,
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let csrf = browser.csrf(request)
        let user = visitor.user
        let state = try await factorSettings.status(of: user)
        var main: Markup = "<h1>Account security</h1>\n"
        if let problem { main += Self.alert(problem) }
        if let notice { main += Self.note(notice) }
        // A passkey just added (the page's script comes here with its id): its name, prefilled
        // from its provider, to keep or change.
        if let added = try? request.query.get(String.self, at: "added"),
            let passkey = state.webauthn.credentials.first(where: { $0.id == added })
        {
            main += """
                <section class="request" aria-labelledby="s-added"><h2 id="s-added">Passkey added</h2>
                <form method="post" action="\(Pages.passkeyRename.href(passkey.id))">\(Self.csrfField(csrf.token))
                \(Self.field("Name this passkey", name: "name", value: passkey.name, hint: "A name you will recognise, such as “Work laptop” or “iPhone”.", extra: " maxlength=\"64\" autofocus"))
                <button type="submit">Save the name</button></form></section>
                """
        }
        if visitor.mustSetUpFactor {
            main += """
                <div class="alert" role="alert"><h2>Set up a sign-in method first</h2>\
                <p>You signed in with a recovery pass. Every earlier sign-in method was removed; set up a new one \
                before anything else.</p></div>
                """
        }
        let keyDevices = try await deviceKeys.devices(userID: user.id)
        main += """
            <p>Two-step verification is <strong>\(state.isEnabled ? "on" : "off")</strong> for \(user.username) \
            (\(user.email)).</p>
            \(emailVerificationNotice(user, csrf: csrf.token, justSent: request.url.query == "done=verification-sent"))\
            \(overview(state, devices: keyDevices.count, settingUp: visitor.mustSetUpFactor))
            <section aria-labelledby="s-totp"><h2 id="s-totp">Authenticator app</h2>
            """
        if state.totp.enabled {
            main += """
                <p>On, set up \(PageTime.shown(state.totp.configuredAt)).</p>
                <form method="post" action="\(Pages.totpRemove.href())">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Turn off the authenticator app</button></form>
                """
        } else {
            main += """
                <p>Codes from an app such as Google Authenticator, 1Password or Authy.</p>
                <form method="post" action="\(Pages.totpSetup.href())">\(Self.csrfField(csrf.token))\
                <button type="submit">Set up an authenticator app</button></form>
                """
        }
        main += "</section>"
        main += """
            <section aria-labelledby="s-passkeys"><h2 id="s-passkeys">Passkeys</h2>
            """
        // After a sign-in with a code, offer the faster and phishing-resistant way (seed 000).
        let methods = visitor.caller.methods
        let signedInWithCode = methods.contains("mfa") && !methods.contains { ["hwk", "swk"].contains($0) }
        if state.webauthn.credentials.isEmpty, signedInWithCode, !visitor.mustSetUpFactor {
            main += """
                <p class="note" data-passkey-nudge>Sign in faster next time, with nothing to type: add a passkey. \
                Your device unlocks it with your face, fingerprint or screen lock.</p>
                """
        }
        if state.webauthn.credentials.isEmpty {
            main += "<p>No passkeys yet.</p>"
        } else {
            main += """
                <div class="table-wrap" role="region" aria-label="Your passkeys" tabindex="0">\
                <table><caption>Your passkeys</caption><thead><tr><th scope="col">Name</th><th scope="col">Provider</th>\
                <th scope="col">Kind</th><th scope="col">Last used</th><th scope="col">Change</th></tr></thead><tbody>
                """
            for (index, passkey) in state.webauthn.credentials.enumerated() {
                main += """
                    <tr><td>\(passkey.name)</td><td>\(passkey.provider ?? "Unknown")</td>\
                    <td>\(passkey.synced ? "Synced" : "This device only")</td><td class="nowrap">\(PageTime.shown(passkey.lastUsedAt))</td>\
                    <td><form method="post" action="\(Pages.passkeyRename.href(passkey.id))">\(Self.csrfField(csrf.token))\
                    <label for="rename-\(index)">New name for \(passkey.name)</label>\
                    <input id="rename-\(index)" name="name" type="text" maxlength="64" required value="\(passkey.name)">\
                    <button type="submit" class="secondary">Rename</button></form>\
                    <form method="post" action="\(Pages.passkeyDelete.href(passkey.id))">\(Self.csrfField(csrf.token))\
                    <button type="submit" class="danger">Delete \(passkey.name)</button></form></td></tr>
                    """
            }
            main += "</tbody></table></div>"
        }
        main += """
            <div data-passkey-register data-options="\(API.Passkeys.registerOptions.href())" \
            data-verify="\(API.Passkeys.registerVerify.href())" data-added="\(Pages.accountSecurity.href())?added=" \
            data-step-up="\(Pages.stepUpPrompt.href())" hidden><button type="button" data-passkey-button>Add a passkey</button>
            <p class="field-error" role="alert" data-passkey-error></p></div></section>
            <section aria-labelledby="s-sms"><h2 id="s-sms">Text message codes</h2>
            """
        if state.sms.enabled {
            main += """
                <p>On: codes go to \(state.sms.maskedDestination ?? "your phone").</p>
                <form method="post" action="\(Pages.codesDisable.href("sms"))">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Turn off SMS codes</button></form>
                """
        } else {
            main += """
                <form method="post" action="\(Pages.codesSetup.href("sms"))" novalidate>\(Self.csrfField(csrf.token))
                \(Self.field("Phone number for SMS codes", name: "phoneNumber", type: "tel", value: user.phone ?? "", autocomplete: "tel", required: false, hint: "In international form, like +14155550123."))
                <button type="submit" class="secondary">Send a code to turn on SMS codes</button></form>
                """
        }
        main += "</section><section aria-labelledby=\"s-email\"><h2 id=\"s-email\">Email codes</h2>"
        if state.email.enabled {
            main += """
                <p>On: codes go to \(state.email.maskedDestination ?? "your address").</p>
                <form method="post" action="\(Pages.codesDisable.href("email"))">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Turn off email codes</button></form>
                """
        } else {
            main += """
                <p>Codes by email go to \(user.email).</p>
                <form method="post" action="\(Pages.codesSetup.href("email"))">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Send a code to turn on email codes</button></form>
                """
        }
        main += "</section>"
        if !visitor.mustSetUpFactor {
            let low = state.backupCodes.remaining <= 3 && state.isEnabled
            main += """
                <section aria-labelledby="s-backup"><h2 id="s-backup">Backup codes</h2>
                <p>\(state.backupCodes.remaining) unused backup codes\(low ? ": make new ones soon" : "").</p>
                <form method="post" action="\(Pages.backupCodesRegenerate.href())">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Make new backup codes</button></form></section>
                """
            let devices = try await factorSettings.rememberedDevices(userID: user.id).devices
            main += "<section aria-labelledby=\"s-remembered\"><h2 id=\"s-remembered\">Remembered devices</h2>"
            if devices.isEmpty {
                main += "<p>No remembered devices.</p>"
            } else {
                main += "<ul>"
                for device in devices {
                    main += """
                        <li>\(device.name), remembered \(PageTime.shown(device.createdAt)) \
                        <form class="inline" method="post" action="\(Pages.forgetDevice.href(device.id.uuidString))">\
                        \(Self.csrfField(csrf.token))<button type="submit" class="secondary">Forget</button></form></li>
                        """
                }
                main += "</ul>"
            }
            main += "</section>"
            main += "<section aria-labelledby=\"s-devices\"><h2 id=\"s-devices\">Devices with keys</h2>"
            if keyDevices.isEmpty {
                main += "<p>No phone signs in with a device key. The Twofold app adds one.</p>"
            } else {
                main += "<ul>"
                for device in keyDevices {
                    main += """
                        <li>\(device.deviceModel ?? "A device") \
                        (\(device.method == .secureEnclave ? "secure hardware key" : "SMS sign-in")), \
                        enrolled \(PageTime.shown(device.enrolledAt)), last used \(PageTime.shown(device.lastUsedAt)) \
                        <form class="inline" method="post" action="\(Pages.deviceRemove.href(device.deviceID))">\
                        \(Self.csrfField(csrf.token))<button type="submit" class="secondary" \
                        aria-label="Remove \(device.deviceModel ?? "this device")">Remove</button></form></li>
                        """
                }
                main += "</ul>"
            }
            main += "</section>"
            let sessionList = try await sessions.list(userID: user.id, current: visitor.caller.sessionID)
            main += "<section aria-labelledby=\"s-sessions\"><h2 id=\"s-sessions\">Sessions</h2><ul>"
            for session in sessionList {
                // Typed as markup, both branches: a conditional of two literals is a `String`
                // otherwise, and its form would be shown as text.
                let signOut: Markup =
                    session.current
                    ? " (this one)"
                    : """
                     <form class="inline" method="post" action="\(Pages.sessionSignOut.href(session.id.uuidString))">\
                    \(Self.csrfField(csrf.token))<button type="submit" class="secondary" \
                    aria-label="Sign out the session signed in \(PageTime.text(session.createdAt))">Sign out</button></form>
                    """
                main += """
                    <li>\(SessionNames.name(session.userAgent)), signed in \(PageTime.shown(session.createdAt))\(signOut)</li>
                    """
            }
            main += """
                </ul><form method="post" action="\(Pages.signOutEverywhere.href())">\(Self.csrfField(csrf.token))\
                <button type="submit" class="secondary">Sign out everywhere</button></form></section>
                <section aria-labelledby="s-password"><h2 id="s-password">Password</h2>
                <form method="post" action="\(Pages.passwordChange.href())" novalidate>\(Self.csrfField(csrf.token))
                \(Self.field("Current password", name: "currentPassword", type: "password", autocomplete: "current-password"))
                \(Self.field("New password", name: "newPassword", type: "password", autocomplete: "new-password", hint: "At least 8 characters; not a common password."))
                <button type="submit" class="secondary">Change password</button></form></section>
                """
        }
        return render(
            request, csrf, title: "Account security", main: main, visitor: visitor, status: status)
    }

    /// A new authenticator-app secret: its QR code, the secret to copy, and the field for its
    /// first code.
    @Sendable func totpSetup(request: Request) async throws -> Response {
        _ = try form(request, as: CSRFOnlyForm.self)
        let visitor = try await signedIn(request, settingUp: true)
        do {
            let setup = try await factorSettings.setupTOTP(user: visitor.user, caller: visitor.caller)
            return totpSetupPage(request, visitor: visitor, setup: setup, problem: nil)
        } catch let problem as Problem where problem.code == .stepUpRequired {
            return try await stepUps.stepUpPage(
                request, visitor: visitor, next: Pages.accountSecurity.href(), refusal: problem)
        } catch let problem as Problem where problem.status < 500 {
            return try await securityPage(
                request, visitor: visitor, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    func totpSetupPage(
        _ request: Request, visitor: BrowserSessions.Visitor, setup: TOTPSetupResponse?, problem: Problem?
    ) -> Response {
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>Set up an authenticator app</h1>\n"
        if let problem { main += Self.alert(problem) }
        if let setup {
            // Drawn here from the same address the app reads, not taken as markup from the answer.
            let qr = (try? QRCode(text: setup.otpauthUri, errorCorrection: .medium)).map(Markup.qrCode) ?? .empty
            main += """
                <ol><li>Open your authenticator app and scan this code.
                <div class="qr" role="img" aria-label="QR code for your authenticator app">\(qr)</div></li>
                <li>Or type this secret into the app: <code id="secret">\(setup.secret)</code> \
                <button type="button" class="secondary" data-copy="secret" hidden>Copy the secret</button></li>
                <li>Enter the 6-digit code the app shows.</li></ol>
                """
        }
        main += """
            <form method="post" action="\(Pages.totpConfirm.href())" novalidate>\(Self.csrfField(csrf.token))
            \(Self.field("Code from the app", name: "code", autocomplete: "one-time-code", inputmode: "numeric", error: problem?.title))
            <button type="submit">Turn on</button></form>
            <p><a href="\(Pages.accountSecurity.href())">Cancel</a></p>
            """
        return render(
            request, csrf, title: "Set up an authenticator app", main: main, visitor: visitor,
            status: problem.map { HTTPResponseStatus(statusCode: $0.status) } ?? .ok)
    }

    /// The first code confirms the app; a first factor's backup codes are shown once.
    @Sendable func totpConfirm(request: Request) async throws -> Response {
        let form = try form(request, as: CodeForm.self)
        let visitor = try await signedIn(request, settingUp: true)
        do {
            let enabled = try await factorSettings.confirmTOTP(
                form.code ?? "", user: visitor.user, caller: visitor.caller, origin: request.origin)
            guard let codes = enabled.backupCodes else {
                return try await securityPage(request, visitor: visitor, notice: "Your authenticator app is on.")
            }
            return backupCodesPage(request, visitor: visitor, codes: codes, said: "Your authenticator app is on.")
        } catch let problem as Problem where problem.status < 500 {
            // The same QR code and secret beside the error: one typo does not start over.
            let pending = try await factorSettings.pendingTOTP(user: visitor.user)
            return totpSetupPage(request, visitor: visitor, setup: pending, problem: problem)
        }
    }

    @Sendable func forgetDevice(request: Request) async throws -> Response {
        try await securityAction(request) { visitor in
            try await factorSettings.forgetRememberedDevice(
                request.parameters.get("deviceID", as: UUID.self), user: visitor.user, caller: visitor.caller,
                origin: request.origin)
            return try await securityPage(request, visitor: visitor, notice: "The device was forgotten.")
        }
    }

    @Sendable func sessionSignOut(request: Request) async throws -> Response {
        try await securityAction(request) { visitor in
            try await signOut.session(
                request.parameters.get("sessionID", as: UUID.self), user: visitor.user, caller: visitor.caller,
                origin: request.origin)
            return try await securityPage(request, visitor: visitor, notice: "That session was signed out.")
        }
    }

    @Sendable func deviceRemove(request: Request) async throws -> Response {
        let confirmation = Confirmation(
            question: "Remove this device?",
            detail: "Its key will no longer sign you in or confirm it's you. To use it again, you add it again "
                + "from the app.",
            button: "Remove the device")
        return try await securityAction(request, confirm: { _ in confirmation }) { visitor in
            _ = try await deviceEnrolment.unenroll(
                DeviceRequest(username: visitor.user.username, deviceId: request.parameters.get("deviceID") ?? ""),
                user: visitor.user, caller: visitor.caller, origin: request.origin)
            return try await securityPage(
                request, visitor: try await refreshed(visitor), notice: "The device was removed.")
        }
    }

    @Sendable func signOutEverywhere(request: Request) async throws -> Response {
        _ = try form(request, as: CSRFOnlyForm.self)
        let visitor = try await signedIn(request)
        let confirmation = Confirmation(
            question: "Sign out everywhere?",
            detail: "Every session of your account ends, this one too, and remembered devices are forgotten. "
                + "You sign in again with your password and a second step.",
            button: "Sign out everywhere")
        if let page = confirmFirst(request, visitor: visitor, confirmation, back: Pages.accountSecurity.href()) {
            return page
        }
        try await signOut.everywhere(user: visitor.user, caller: visitor.caller, origin: request.origin)
        let response = Self.redirect(Pages.signIn.href())
        browser.clear(on: response)
        return response
    }
}

extension SecurityPages {
    /// The security page's first table: each way to sign in, whether it is on, and a link to
    /// where it is set up, changed or removed (the shape of GitHub's and Google's pages).
    func overview(_ state: TwoFactorStatus, devices: Int, settingUp: Bool) -> Markup {
        func row(_ method: String, _ status: Markup, _ action: String, _ anchor: String) -> Markup {
            """
            <tr><th scope="row">\(method)</th><td>\(status)</td>\
            <td><a href="#\(anchor)" aria-label="\(action): \(method)">\(action)</a></td></tr>
            """
        }
        let passkeys = state.webauthn.credentials.count
        var rows: [Markup] = []
        if !settingUp { rows.append(row("Password", "Set", "Change", "s-password")) }
        rows.append(
            row(
                "Authenticator app",
                state.totp.enabled ? "On, set up \(PageTime.shown(state.totp.configuredAt))" : "Off",
                state.totp.enabled ? "Turn off" : "Set up", "s-totp"))
        rows.append(
            row(
                "Passkeys", passkeys == 0 ? "None" : passkeys == 1 ? "1 passkey" : "\(passkeys) passkeys",
                passkeys == 0 ? "Add" : "Manage", "s-passkeys"))
        for (name, codes, anchor) in [
            ("Text message codes", state.sms, "s-sms"), ("Email codes", state.email, "s-email"),
        ] {
            rows.append(
                row(
                    name, codes.enabled ? "On, to \(codes.maskedDestination ?? "you")" : "Off",
                    codes.enabled ? "Turn off" : "Set up", anchor))
        }
        if !settingUp {
            let left = state.backupCodes.remaining
            rows.append(
                row("Backup codes", left == 1 ? "1 left" : "\(left) left", left == 0 ? "Make" : "Make new", "s-backup"))
            rows.append(
                row(
                    "Devices with keys", devices == 0 ? "None" : devices == 1 ? "1 device" : "\(devices) devices",
                    devices == 0 ? "About" : "Manage", "s-devices"))
        }
        return """
            <section aria-labelledby="s-overview"><h2 id="s-overview">Sign-in methods</h2>
            <div class="table-wrap" role="region" aria-labelledby="s-overview" tabindex="0"><table>\
            <thead><tr><th scope="col">Method</th><th scope="col">Status</th><th scope="col">Change</th></tr></thead>\
            <tbody>\(rows.joined())</tbody></table></div></section>
            """
    }
}
