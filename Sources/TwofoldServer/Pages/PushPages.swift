import Foundation
import TwofoldAPI
import Vapor

/// The form of "Approve on your phone": the login flow, and once asked, its request.
struct PushForm: Content, CSRFCarrying {
    var csrf: String?
    var flow: String?
    var methods: String?
    var next: String?
    var requestId: String?
    var number: String?
    var trustDevice: String?
}

extension SignInPages {
    /// The second step's button that asks the phone: the main one when nothing else is typed here.
    static func askPhoneForm(carrying fields: Markup, main: Bool) -> Markup {
        let style: Markup = main ? .empty : " class=\"secondary\""
        return """
            <form method="post" action="\(Pages.pushStart.href())">\(fields)
            <button type="submit"\(style)>Approve on your phone</button>
            <p class="hint">Your phone with Twofold asks you to pick the number this page shows.</p></form>
            """
    }

    /// Asks the account's phone, then shows the number to pick there while the page waits.
    @Sendable func pushStart(request: Request) async throws -> Response {
        let form = try form(request, as: PushForm.self)
        let (flow, methods, next) = Self.carried(form)
        do {
            let started = try await push.start(flow: flow, origin: request.origin)
            return pushWaitPage(
                request, flow: flow, methods: methods, next: next, requestID: started.requestId,
                number: started.number, asking: started.asking, place: started.place)
        } catch let problem as Problem where problem.status < 500 {
            return secondStepRefusal(problem, request, flow: flow, methods: methods, chosen: nil, next: next)
        }
    }

    /// The phone approved (the script saw it, or the person says so): the sign-in completes. Not
    /// yet approved, the same wait again; refused, the second step with the phone's answer.
    @Sendable func pushComplete(request: Request) async throws -> Response {
        let form = try form(request, as: PushForm.self)
        let (flow, methods, next) = Self.carried(form)
        do {
            let signedIn = try await secondStep.complete(
                .init(
                    flow: flow, method: .push, pushRequest: form.requestId, trustDevice: form.trustDevice == "on"),
                origin: request.origin, on: request.eventLoop)
            return signedInResponse(signedIn, next: next)
        } catch let problem as Problem where problem.status < 500 {
            if problem.code == .conflict, let requestID = form.requestId, let number = Int(form.number ?? "") {
                return pushWaitPage(
                    request, flow: flow, methods: methods, next: next, requestID: requestID, number: number,
                    problem: problem)
            }
            return secondStepRefusal(
                problem, request, flow: flow, methods: methods.filter { $0 != .push || problem.code != .rateLimited },
                chosen: nil, next: next)
        }
    }

    /// "Pick this number on your phone", and the wait: the script asks the server (a long poll)
    /// and posts the form when the phone approves; without script, the button does.
    func pushWaitPage(
        _ request: Request, flow: String, methods: [FactorMethod], next: String?, requestID: String, number: Int,
        asking: String? = nil, place: String? = nil, problem: Problem? = nil
    ) -> Response {
        let csrf = browser.csrf(request)
        let fields = Self.flowFields(csrf: csrf.token, next: next, flow: flow, methods: methods)
        var main: Markup = "<h1>Approve on your phone</h1>\n"
        if let problem { main += Self.alert(problem) }
        let what: Markup =
            asking.map { asking in
                "<p class=\"hint\">Your phone will say the request comes from \(asking), \(place ?? "this network").</p>"
            } ?? .empty
        main += """
            <p>Open Twofold on your phone and pick this number:</p>
            <p class="push-number">\(String(number))</p>
            \(what)
            <div data-push-wait data-status="\(API.Push.status.href())" data-flow="\(flow)" data-request="\(requestID)">
            <p role="status" data-push-state>Waiting for your phone…</p>
            <form method="post" action="\(Pages.pushComplete.href())" data-push-complete>\(fields)
            <input type="hidden" name="requestId" value="\(requestID)"><input type="hidden" name="number" value="\(String(number))">
            \(rememberField)
            <button type="submit">I approved it, continue</button></form>
            </div>
            """
        let others = methods.filter { [.totp, .sms, .email, .backup].contains($0) }
        main += Self.otherWays(others, carrying: fields) {
            $0.isSentCode ? Pages.resendCode.href() : Pages.secondStep.href()
        }
        main += "<p><a href=\"\(Pages.recovery.href())\">Lost every sign-in method? Recover your account</a></p>"
        return render(
            request, csrf, title: "Approve on your phone", main: main, visitor: nil,
            status: problem.map { HTTPResponseStatus(statusCode: $0.status) } ?? .ok)
    }

    /// The hidden fields that carry a second step from page to page: the form's token, where to
    /// go after, the login flow and the methods it offered.
    static func flowFields(csrf: String, next: String?, flow: String, methods: [FactorMethod]) -> Markup {
        csrfField(csrf) + nextField(next) + "<input type=\"hidden\" name=\"flow\" value=\"\(flow)\">"
            + "<input type=\"hidden\" name=\"methods\" value=\"\(methods.map(\.rawValue).joined(separator: ","))\">"
    }

    /// "Remember this device for 30 days" (seed 002), its length from the setting.
    var rememberField: Markup {
        let days = max(1, Int((trustedDeviceLifetime / 86_400).rounded()))
        return """
            <div class="check"><input type="checkbox" id="f-trust" name="trustDevice" value="on">\
            <label for="f-trust">Remember this device for \(days == 1 ? "1 day" : "\(days) days")</label></div>
            """
    }

    private static func carried(_ form: PushForm) -> (flow: String, methods: [FactorMethod], next: String?) {
        (
            form.flow ?? "", (form.methods ?? "").split(separator: ",").map { FactorMethod(rawValue: String($0)) },
            safeNext(form.next)
        )
    }
}
