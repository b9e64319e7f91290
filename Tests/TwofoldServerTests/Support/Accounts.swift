import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// Accounts as the tests make them: signed up, signed in, stepped up with the password, their phone verified.
enum Accounts {
    static let password = ClientAccounts.password

    /// Registers `name` and signs in, returning the token answer: through the typed client, as an
    /// app does (`ClientAccounts`), with the address the registration email confirms verified.
    static func signUp(_ app: Application, _ name: String = "alice", address: String = "10.0.0.1") async throws
        -> AuthTokensResponse
    {
        let client = app.client(from: address)
        try await verifyEmail(app, try await ClientAccounts.register(client, name).user)
        return try await ClientAccounts.signIn(client, name)
    }

    /// Marks `user`'s address verified, as the link sent at registration does (the tests of that
    /// link use it; the others start from an account whose owner opened it).
    static func verifyEmail(_ app: Application, _ user: UserDTO) async throws {
        _ = try await app.twofold.users.verifyEmail(user.email, userID: user.id, now: app.twofold.clock.now())
    }

    /// Re-enters the password on the session of `token` (`POST /auth/step-up`, `method:
    /// password`); the new access token.
    static func stepUpWithPassword(_ app: Application, token: String) async throws -> String {
        try await app.client().send(
            API.Auth.stepUp, StepUpRequest(method: .password, password: password), bearer: token
        ).accessToken.token
    }

    static let newPassword = "a different long passphrase"

    static func put<Body, Answer>(
        _ app: Application, _ endpoint: Endpoint<Body, Answer>, token: String, _ body: [String: String]
    ) async throws -> (UInt, ProblemBody?) {
        var result: (UInt, ProblemBody?) = (0, nil)
        try await app.raw(.PUT, endpoint.path(), headers: .bearer(token), body: json(body)) {
            response in
            result = (response.status.code, response.status.code < 300 ? nil : try response.problem())
        }
        return result
    }

    /// `PUT path` with a JSON body as `token`; the status and, on failure, the problem.
    static func put(_ app: Application, path: String, token: String, _ body: [String: String]) async throws
        -> (UInt, ProblemBody?)
    {
        var result: (UInt, ProblemBody?) = (0, nil)
        try await app.raw(.PUT, path, headers: .bearer(token), body: json(body)) { response in
            result = (response.status.code, response.status.code < 300 ? nil : try response.problem())
        }
        return result
    }

    /// Makes `phone` the verified number of `token`'s account, with the code sent to it.
    static func verifyPhone(_ app: Application, token: String, clock: TestClock, phone: String = "+14155550123")
        async throws
    {
        let client = app.client()
        let endpoint = API.Account.changePhone
        let asked = try await client.exchange(
            endpoint.method, endpoint.url(relativeTo: client.baseURL), body: PhoneChangeRequest(phoneNumber: phone),
            bearer: token)
        #expect(asked.status == 202)
        guard case .codeSent = try client.read(asked, of: endpoint) else {
            Issue.record("no code was sent to \(phone)")
            return
        }
        let code = try #require(
            try await Codes.deliverMessages(app, clock: clock).last { $0.destination == phone }
        ).code
        let confirmed = try await client.exchange(
            endpoint.method, endpoint.url(relativeTo: client.baseURL),
            body: PhoneChangeRequest(phoneNumber: phone, code: code), bearer: token)
        #expect(confirmed.status == 200)
        guard case .changed = try client.read(confirmed, of: endpoint) else {
            Issue.record("\(phone) was not made the account's number")
            return
        }
    }

    static func account(_ app: Application, token: String) async throws -> UserDTO {
        try await app.client().send(API.Account.show, bearer: token)
    }

    /// Step-up with an SMS code sent by `POST /auth/step-up/send`; returns the fresh access token.
    static func stepUpBySMS(_ app: Application, token: String, clock: TestClock) async throws -> String {
        let client = app.client()
        let sent = try await client.send(API.Auth.stepUpSend, StepUpSendRequest(method: .sms), bearer: token)
        try #require(sent.maskedDestination == "+•••••••0123")
        let code = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
        return try await client.send(API.Auth.stepUp, StepUpRequest(method: .sms, code: code), bearer: token)
            .accessToken.token
    }

    /// A refusal's problem document in the form the helpers give back (`ProblemBody`); a refusal
    /// without one fails the test.
    static func problem(_ refusal: APIError) throws -> ProblemBody {
        let problem = try #require(refusal.problem, "\(refusal) has no problem document")
        return ProblemBody(
            type: problem.type, title: problem.title, status: problem.status, detail: problem.detail,
            code: problem.code.rawValue, errors: problem.errors, retryAfter: problem.retryAfter,
            attemptsRemaining: problem.attemptsRemaining,
            lockoutUntil: problem.lockoutUntil.map { ISO8601DateFormatter().string(from: $0) })
    }
}
