import Foundation
import TwofoldAPI
import Vapor

extension AdminPages {
    /// The visitor when an administrator as `SignInPolicy.admitAdministrator` decides (the API's
    /// `AdminOnly` asks the same): else the sign-in page, the step-up that proves a second factor
    /// (then back here), or a refusal that says what to do.
    func administrator(_ request: Request) async throws -> BrowserSessions.Visitor {
        let visitor = try await signedIn(request)
        do {
            try await administration.policy.admitAdministrator(visitor.caller)
        } catch let problem as Problem
            where problem.code == .stepUpRequired
            && problem.errors?["stepUp"] != SignInNeed.administratorFactor.rawValue
        {
            let next = request.method == .GET ? request.url.path : Pages.admin.href()
            throw Detour(
                response: try await stepUps.stepUpPage(request, visitor: visitor, next: next, refusal: problem))
        } catch let problem as Problem where problem.code == .stepUpRequired {
            throw Detour(
                response: refusal(
                    request,
                    Problem(
                        status: 403, code: .forbidden, title: "Set up a second factor first",
                        detail: problem.detail),
                    visitor: visitor, next: (Pages.accountSecurity.href(), "Go to your account security")))
        } catch let problem as Problem where problem.status == 403 {
            throw Detour(
                response: refusal(
                    request,
                    Problem(
                        status: 403, code: .forbidden, title: "Administrators only",
                        detail: "This page is for administrators. Your account is not one."),
                    visitor: visitor))
        }
        return visitor
    }

    var adminNav: Markup {
        """
        <nav aria-label="Administration" class="subnav"><a href="\(Pages.admin.href())">Users</a>\
        <a href="\(Pages.adminRecovery.href())">Recovery requests</a><a href="\(Pages.adminAudit.href())">Audit log</a></nav>
        """
    }

    @Sendable func adminUsers(request: Request) async throws -> Response {
        let visitor = try await administrator(request)
        let csrf = browser.csrf(request)
        let query: UserQuery
        do {
            query = try request.query()
        } catch let problem as Problem {
            return refusal(request, problem, visitor: visitor)
        }
        let page = query.page.range
        let listed = try await administration.users(
            UserQuery(q: query.q, page: PageQuery(limit: page.count + 1, offset: page.lowerBound))
        ).users
        var main =
            "<h1>Administration</h1>\n" + adminNav + """
                <form method="get" action="\(Pages.admin.href())" role="search">
                \(Self.field("Search users by name or email", name: "q", type: "search", value: query.q ?? "", required: false))
                <button type="submit">Search</button></form>
                <div class="table-wrap" role="region" aria-label="Users" tabindex="0">\
                <table><caption>Users</caption><thead><tr><th scope="col">Username</th><th scope="col">Email</th>\
                <th scope="col">Role</th><th scope="col">Status</th><th scope="col">Registered</th></tr></thead><tbody>
                """
        for user in listed.prefix(page.count) {
            main += """
                <tr><td><a href="\(Pages.adminUser.href(user.id.uuidString))">\(user.username)</a></td>\
                <td>\(user.email)</td><td>\(user.role)</td><td>\(user.status)</td>\
                <td class="nowrap">\(PageTime.shown(user.createdAt))</td></tr>
                """
        }
        main += "</tbody></table></div>"
        if listed.isEmpty { main += "<p>No users match.</p>" }
        main += "<nav aria-label=\"Pages\" class=\"paging\">"
        let search =
            query.q.map { "q=\(($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))&" } ?? ""
        if page.lowerBound > 0 {
            main +=
                "<a href=\"\(Pages.admin.href())?\(search)offset=\(max(0, page.lowerBound - page.count))\">Previous</a>"
        }
        if listed.count > page.count {
            main += "<a href=\"\(Pages.admin.href())?\(search)offset=\(page.upperBound)\">Next</a>"
        }
        main += "</nav>"
        return render(request, csrf, title: "Administration", main: main, visitor: visitor)
    }

    @Sendable func adminUser(request: Request) async throws -> Response {
        let visitor = try await administrator(request)
        do {
            return try await adminUserPage(
                request, visitor: visitor, id: request.parameters.get("userID", as: UUID.self))
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: visitor)
        }
    }

    func adminUserPage(_ request: Request, visitor: BrowserSessions.Visitor, id: UUID?, notice: String? = nil)
        async throws -> Response
    {
        let csrf = browser.csrf(request)
        let detail = try await administration.user(id)
        let user = detail.user
        let stored = try await administration.account(user.id)
        let state = try await factorSettings.status(of: stored)
        let devices = try await deviceKeys.devices(userID: user.id)
        let lockouts = try await administration.lockouts(user.id)
        let locks =
            lockouts.isEmpty
            ? "none"
            : lockouts.map { "\($0.factor.rawValue) until \(PageTime.text($0.until))" }.joined(
                separator: "; ")
        var main: Markup = "<h1>\(user.username)</h1>\n" + adminNav
        if let notice { main += Self.note(notice) }
        main += """
            <dl><dt>Email</dt><dd>\(user.email)</dd><dt>Role</dt><dd>\(user.role)</dd>\
            <dt>Status</dt><dd>\(user.status)\(user.status == "locked" ? " (locked: 20 wrong codes in a day, or a disowned recovery)" : "")</dd>\
            <dt>Factor locks</dt><dd>\(locks)</dd>\
            <dt>Registered</dt><dd>\(PageTime.shown(user.createdAt))</dd></dl>
            <h2>Sign-in methods</h2><ul>
            <li>Authenticator app: \(state.totp.enabled ? "on" : "off")</li>
            <li>Passkeys: \(state.webauthn.credentials.count)\(state.webauthn.credentials.isEmpty ? "" : " (" + state.webauthn.credentials.map { $0.name }.joined(separator: ", ") + ")")</li>
            <li>SMS codes: \(state.sms.enabled ? "on" : "off"); email codes: \(state.email.enabled ? "on" : "off")</li>
            <li>Backup codes left: \(state.backupCodes.remaining)</li>
            <li>Remembered devices: \(state.trustedDevices.count)</li></ul>
            <h2>Devices with keys</h2>
            """
        if devices.isEmpty {
            main += "<p>None.</p>"
        } else {
            main += "<ul>"
            for device in devices {
                main += """
                    <li>\(device.deviceModel ?? "Unknown model") (\(device.method.rawValue)), \
                    enrolled \(PageTime.shown(device.enrolledAt))</li>
                    """
            }
            main += "</ul>"
        }
        main += "<h2>Sessions</h2><ul>"
        for session in detail.sessions {
            main +=
                "<li>\(SessionNames.name(session.userAgent)) (\(session.userAgent ?? "no User-Agent")), \(session.ipAddress ?? ""), signed in \(PageTime.shown(session.createdAt))</li>"
        }
        main += "</ul>"
        main += """
            <h2>Actions</h2>
            <form class="inline" method="post" action="\(Pages.adminUnlock.href(user.id.uuidString))">\(Self.csrfField(csrf.token))\
            <button type="submit" class="secondary">Unlock</button></form>
            <form class="inline" method="post" action="\(Pages.adminResetMFA.href(user.id.uuidString))">\(Self.csrfField(csrf.token))\
            <button type="submit" class="danger">Reset every sign-in method</button></form>
            <h2>Audit trail</h2>
            """ + Self.auditTable(detail.audit, names: [user.id: user.username])
        main += "<p><a href=\"\(Pages.adminAudit.href())?userId=\(user.id.uuidString)\">The whole trail</a></p>"
        return render(request, csrf, title: user.username, main: main, visitor: visitor)
    }

    /// What a reviewer must know first: the owner said earlier recoveries were not them.
    static func disownedWarning(_ count: Int) -> Markup {
        guard count > 0 else { return "" }
        let earlier = count == 1 ? "an earlier recovery of this account was" : "\(count) earlier recoveries were"
        return """
            <div class="alert" role="note"><h4>Warning</h4><p>The owner said \(earlier) not them. Check with them \
            by other means before approving.</p></div>
            """
    }

    /// Who, what (in words) and from where; `names` are the accounts' usernames, by id.
    static func auditTable(_ events: [AuditEventDTO], names: [UUID: String] = [:]) -> Markup {
        var html: Markup = """
            <div class="table-wrap" role="region" aria-label="Events" tabindex="0">\
            <table><caption>Events, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th>\
            <th scope="col">What</th><th scope="col">From</th><th scope="col">Detail</th></tr></thead><tbody>
            """
        for event in events {
            var who: Markup = "no account"
            if let id = event.userId {
                who =
                    names[id].map { "<a href=\"\(Pages.adminUser.href(id.uuidString))\">\($0)</a>" }
                    ?? "a deleted account"
            }
            html += """
                <tr><td class="nowrap">\(PageTime.shown(event.occurredAt))</td><td>\(who)</td>\
                <td>\(AuditWords.event(event.type))</td>\
                <td>\(event.ipAddress ?? "")</td><td>\(AuditWords.detail(event.detail))</td></tr>
                """
        }
        return html + "</tbody></table></div>" + (events.isEmpty ? "<p>No events.</p>" : "")
    }

    @Sendable func adminUnlock(request: Request) async throws -> Response {
        try await adminAction(request) { visitor, id in
            _ = try await administration.unlock(
                id, by: visitor.caller, adminUser: visitor.user, origin: request.origin)
            return "Unlocked."
        }
    }

    @Sendable func adminResetMFA(request: Request) async throws -> Response {
        let id = request.parameters.get("userID", as: UUID.self)
        let confirm = { () async throws -> Confirmation in
            let name = (try? await administration.account(id))?.username ?? "this user"
            return Confirmation(
                question: "Reset every sign-in method of \(name)?",
                detail: "Their authenticator app, passkeys, devices, SMS and email codes and backup codes are removed, "
                    + "and every session of theirs ends. They are told by email, and sign in again with their "
                    + "password alone.",
                button: "Reset every sign-in method")
        }
        return try await adminAction(request, confirm: confirm) { visitor, id in
            _ = try await administration.resetMFA(
                id, by: visitor.caller, adminUser: visitor.user, origin: request.origin)
            return "Every sign-in method was removed and every session signed out; the user was told."
        }
    }

    private func adminAction(
        _ request: Request, confirm: (() async throws -> Confirmation)? = nil,
        _ action: (BrowserSessions.Visitor, UUID?) async throws -> String
    ) async throws -> Response {
        _ = try form(request, as: CSRFOnlyForm.self)
        let visitor = try await administrator(request)
        let id = request.parameters.get("userID", as: UUID.self)
        if let confirm,
            let page = confirmFirst(
                request, visitor: visitor, try await confirm(), back: Pages.adminUser.href(id?.uuidString ?? ""))
        {
            return page
        }
        do {
            let notice = try await action(visitor, id)
            return try await adminUserPage(request, visitor: visitor, id: id, notice: notice)
        } catch let problem as Problem where problem.code == .stepUpRequired {
            return try await stepUps.stepUpPage(
                request, visitor: visitor, next: Pages.adminUser.href(id?.uuidString ?? ""), refusal: problem)
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: visitor)
        }
    }

    @Sendable func adminAudit(request: Request) async throws -> Response {
        let visitor = try await administrator(request)
        let csrf = browser.csrf(request)
        var main: Markup = "<h1>Audit log</h1>\n" + adminNav
        var query = AuditQuery()
        // A blank field of the form is no filter (the API refuses a blank one). `user` names the
        // account as a person would, by username or email; `userId` as a link does.
        var items = (URLComponents(string: "?" + (request.url.query ?? ""))?.queryItems ?? []).filter {
            !($0.value ?? "").isEmpty
        }
        let named = items.first { $0.name == "user" }?.value
        items.removeAll { $0.name == "user" }
        do {
            query = try AuditQuery(items: items)
        } catch {
            main += Self.alert(InputValidation.failure(error.errors))
        }
        var unknown = false
        if let named {
            if let found = try await administration.account(named: named) {
                query.userId = found.id
            } else {
                unknown = true
                main += Self.alert(
                    Problem(
                        status: 404, code: .notFound, title: "No such account",
                        detail: "No account is named \(named)."))
            }
        }
        var shownName: String?
        if let id = query.userId { shownName = try await administration.usernames([id])[id] }
        let day = { (date: Date?) in
            date.map { ISO8601DateFormatter.string(from: $0, timeZone: .gmt, formatOptions: [.withFullDate]) } ?? ""
        }
        main += """
            <form method="get" action="\(Pages.adminAudit.href())" class="filters">
            \(Self.field("User", name: "user", value: shownName ?? named ?? "", required: false, hint: "A username or an email address."))
            \(Self.field("Event type", name: "type", value: query.type ?? "", required: false, hint: "Such as login.failed or recovery.approved."))
            \(Self.field("From (UTC)", name: "from", type: "date", value: day(query.from), required: false))
            \(Self.field("Before (UTC)", name: "to", type: "date", value: day(query.to), required: false))
            <button type="submit">Filter</button></form>
            """
        let page = query.page.range
        var asked = query
        asked.page = PageQuery(limit: page.count + 1, offset: page.lowerBound)
        let events = unknown ? [] : try await administration.events(asked).events
        let shown = Array(events.prefix(page.count))
        main += Self.auditTable(shown, names: try await administration.usernames(Set(shown.compactMap(\.userId))))
        // Previous and next pages of the same filter.
        func link(_ offset: Int, _ text: String) -> Markup {
            var kept = query
            kept.page = PageQuery(limit: page.count, offset: offset)
            var parts = URLComponents()
            parts.queryItems = kept.items
            return "<a href=\"\(Pages.adminAudit.href())\(parts.string ?? "")\">\(text)</a>"
        }
        main += "<nav aria-label=\"Pages\" class=\"paging\">"
        if page.lowerBound > 0 { main += link(max(0, page.lowerBound - page.count), "Newer") }
        if events.count > page.count { main += link(page.upperBound, "Older") }
        main += "</nav>"
        return render(request, csrf, title: "Audit log", main: main, visitor: visitor)
    }
}
