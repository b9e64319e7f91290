import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// Accounts as the tests make them: signed up, signed in, stepped up with the password, their phone verified.
enum Accounts {
    enum SignUpError: Error { case secondStepAsked(String) }

    static let password = "correct horse battery staple"

    /// Registers `name` and signs in, returning the token answer: through the typed client, as an
    /// app does.
    static func signUp(_ app: Application, _ name: String = "alice", address: String = "10.0.0.1") async throws
        -> AuthTokensResponse
    {
        let client = app.client(from: address)
        let registered = try await client.send(
            API.Auth.register, RegisterRequest(username: name, email: "\(name)@example.com", password: password))
        try await verifyEmail(app, registered.user)
        let outcome = try await client.send(
            API.Auth.login, LoginRequest(email: "\(name)@example.com", password: password))
        guard case .signedIn(let tokens) = outcome else { throw SignUpError.secondStepAsked(name) }
        return tokens
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
        try await app.testing().test(.PUT, endpoint.path(), headers: .bearer(token), body: json(body)) {
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
        try await app.testing().test(.PUT, path, headers: .bearer(token), body: json(body)) { response in
            result = (response.status.code, response.status.code < 300 ? nil : try response.problem())
        }
        return result
    }

    /// Makes `phone` the verified number of `token`'s account, with the code sent to it.
    static func verifyPhone(_ app: Application, token: String, clock: TestClock, phone: String = "+14155550123")
        async throws
    {
        #expect(try await put(app, path: API.Account.changePhone.path(), token: token, ["phoneNumber": phone]).0 == 202)
        let code = try #require(
            try await Codes.deliverMessages(app, clock: clock).last { $0.destination == phone }
        ).code
        #expect(
            try await put(
                app, path: API.Account.changePhone.path(), token: token, ["phoneNumber": phone, "code": code]
            )
            .0 == 200)
    }

    static func account(_ app: Application, token: String) async throws -> UserDTO {
        var user: UserDTO?
        try await app.testing().test(.GET, API.Account.show.path(), headers: .bearer(token)) { response in
            user = try response.decode(UserDTO.self)
        }
        return try #require(user)
    }

    /// Step-up with an SMS code sent by `POST /auth/step-up/send`; returns the fresh access token.
    static func stepUpBySMS(_ app: Application, token: String, clock: TestClock) async throws -> String {
        try await app.testing().test(
            .POST, API.Auth.stepUpSend.path(), headers: .bearer(token), body: json(["method": "sms"])
        ) { response in
            #expect(response.status == .ok)
            try #require(try response.decode(CodeSentResponse.self).maskedDestination == "+•••••••0123")
        }
        let code = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
        var fresh: String?
        try await app.testing().test(
            .POST, API.Auth.stepUp.path(), headers: .bearer(token), body: json(["method": "sms", "code": code])
        ) { response in
            #expect(response.status == .ok)
            fresh = try response.decode(StepUpResponse.self).accessToken.token
        }
        return try #require(fresh)
    }
}
