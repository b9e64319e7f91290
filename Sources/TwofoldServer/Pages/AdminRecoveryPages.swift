import Foundation
import TwofoldAPI
import Vapor

struct DecisionForm: Content, CSRFCarrying {
    var csrf: String?
    var decision: String?
    var note: String?
}

/// The console's recovery queue: each request with what a reviewer sets beside it (the
/// message, the document, the address, the account's recent sign-ins) and the decision.
extension AdminPages {
    @Sendable func adminRecovery(request: Request) async throws -> Response {
        let visitor = try await administrator(request)
        return try await adminRecoveryPage(request, visitor: visitor)
    }

    func adminRecoveryPage(
        _ request: Request, visitor: BrowserSessions.Visitor, notice: String? = nil, problem: Problem? = nil,
        status: HTTPResponseStatus = .ok
    ) async throws -> Response {
        let csrf = browser.csrf(request)
        let queue = try await recovery.queue(PageQuery(limit: 100))
        var main: Markup = "<h1>Recovery requests</h1>\n" + adminNav
        if let notice { main += Self.note(notice) }
        if let problem { main += Self.alert(problem) }
        main += """
            <p>Check that the person is the account's owner before approving: their message against what you know \
            of them, the document, the address and time of the request. An approved request sends a single-use \
            link to the account's email address; using it removes every sign-in method.</p>
            """
        if queue.requests.isEmpty { main += "<p>No request waits for review.</p>" }
        for item in queue.requests {
            let id = item.id.uuidString
            let signIns = try await recentSignIns(item.userId)
            main += """
                <article class="request" aria-labelledby="r-\(id)"><h2 id="r-\(id)">\(item.username) \
                (\(item.email))</h2>
                <dl><dt>State</dt><dd>\(item.state.rawValue.replacingOccurrences(of: "_", with: " "))</dd>\
                <dt>Asked</dt><dd>\(PageTime.shown(item.createdAt)) from \(item.ipAddress ?? "an unknown address")</dd>\
                <dt>Email proven</dt><dd>\(PageTime.shown(item.emailVerifiedAt))</dd>\
                <dt>Browser</dt><dd>\(item.userAgent ?? "unknown")</dd>\
                <dt>Account</dt><dd>\(item.accountStatus)</dd></dl>
                \(Self.disownedWarning(item.disownedRecoveries))
                <h3>Their message</h3><p class="message">\(item.message)</p>
                \(signIns)
                """
            if let type = item.documentType {
                main += """
                    <p><a href="\(Pages.adminRecoveryDocument.href(id))">Download the document</a> \
                    (\(type), \(item.documentBytes ?? 0) bytes)</p>
                    """
            }
            if item.state == .pendingReview {
                main += """
                    <form method="post" action="\(Pages.adminRecoveryDecide.href(id))">\(Self.csrfField(csrf.token))
                    <div class="field"><label for="note-\(id)">Your note (kept with the decision)</label>\
                    <textarea id="note-\(id)" name="note" rows="2" required maxlength="\(RecoveryDecisionRequest.maximumNoteLength)"></textarea></div>
                    <button type="submit" name="decision" value="approve">Approve</button>
                    <button type="submit" name="decision" value="deny" class="danger">Deny</button></form>
                    """
            }
            main += "</article>"
        }
        return render(request, csrf, title: "Recovery requests", main: main, visitor: visitor, status: status)
    }

    /// The account's last successful sign-ins, for the reviewer to set beside the request.
    private func recentSignIns(_ userID: UUID) async throws -> Markup {
        let events = try await administration.recentSignIns(userID)
        guard !events.isEmpty else { return "<h3>Recent sign-ins</h3><p>None on record.</p>" }
        let items = events.map { (event: AuditEventDTO) -> Markup in
            """
            <li>\(PageTime.shown(event.occurredAt)) from \(event.ipAddress ?? "an unknown address"), \
            \(SessionNames.name(event.userAgent)), with \(AuditWords.detail(event.detail))</li>
            """
        }
        return "<h3>Recent sign-ins</h3><ul>\(items.joined())</ul>"
    }

    @Sendable func adminRecoveryDecide(request: Request) async throws -> Response {
        let form = try form(request, as: DecisionForm.self)
        let visitor = try await administrator(request)
        guard let decision = form.decision, ["approve", "deny"].contains(decision) else {
            return try await adminRecoveryPage(
                request, visitor: visitor,
                problem: InputValidation.failure(["decision": "must be approve or deny"]), status: .unprocessableEntity)
        }
        do {
            let decided = try await recovery.decide(
                request.parameters.get("recoveryID", as: UUID.self), approve: decision == "approve",
                note: form.note ?? "", by: visitor.caller, adminUser: visitor.user, origin: request.origin)
            return try await adminRecoveryPage(
                request, visitor: visitor,
                notice: "The request of \(decided.username) was \(decision == "approve" ? "approved" : "denied").")
        } catch let problem as Problem where problem.code == .stepUpRequired {
            return try await stepUps.stepUpPage(
                request, visitor: visitor, next: Pages.adminRecovery.href(), refusal: problem)
        } catch let problem as Problem where problem.status < 500 {
            return try await adminRecoveryPage(
                request, visitor: visitor, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
        }
    }

    @Sendable func adminRecoveryDocument(request: Request) async throws -> Response {
        let visitor = try await administrator(request)
        do {
            return .attachment(
                try await recovery.document(
                    request.parameters.get("recoveryID", as: UUID.self), by: visitor.user.id, origin: request.origin))
        } catch let problem as Problem where problem.status < 500 {
            return refusal(request, problem, visitor: visitor)
        }
    }
}
