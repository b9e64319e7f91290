import Foundation
import TwofoldAPI
import Vapor

/// A passkey's answer as a form carries it: the pages' script asks the JSON API for the
/// options (as the SDK does), lets the browser sign, and posts the credential (`toJSON()`) in
/// `credential` with the page's other fields, so the sign-in ends as every other form does: a
/// cookie and a redirect, or the page again with the refusal in words.
struct PasskeySignInForm: Content, CSRFCarrying {
    var csrf: String?
    var credential: String?
    /// The login flow, when the passkey is a sign-in's second step.
    var flow: String?
    var methods: String?
    var trustDevice: String?
    var next: String?
}

extension SignInPages {

    /// `POST /sign-in/passkey`: a passkey signs in with no password, or completes a login flow's
    /// second step (`flow`).
    @Sendable func passkeySignIn(request: Request) async throws -> Response {
        let form = try form(request, as: PasskeySignInForm.self)
        let next = Self.safeNext(form.next)
        let flow = form.flow.flatMap { $0.isEmpty ? nil : $0 }
        let methods = (form.methods ?? "").split(separator: ",").map { FactorMethod(rawValue: String($0)) }
        do {
            let credential = try Self.passkeyAnswer(form.credential, as: AuthenticationCredential.self)
            if let flow {
                let signedIn = try await secondStep.complete(
                    .init(flow: flow, method: .webauthn, passkey: credential, trustDevice: form.trustDevice == "on"),
                    origin: request.origin, on: request.eventLoop)
                return signedInResponse(signedIn, next: next)
            }
            let tokens = try await passwordless.verify(
                credential, address: request.clientAddress, origin: request.origin)
            let response = Self.redirect(next ?? Pages.accountSecurity.href())
            browser.begin(tokens, on: response)
            return response
        } catch let problem as Problem where problem.status < 500 {
            // Without a flow the sign-in page says why; with one, as any second step's refusal.
            guard let flow else {
                return signInForm(
                    request, next: next, problem: problem, status: HTTPResponseStatus(statusCode: problem.status))
            }
            return secondStepRefusal(problem, request, flow: flow, methods: methods, chosen: nil, next: next)
        }
    }
}
