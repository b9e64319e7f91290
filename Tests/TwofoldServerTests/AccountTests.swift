import Foundation
import Testing
import TwofoldAPI
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// The signed-in user's account: password, phone and email changes, and step-up by SMS/email.
@Suite struct AccountTests {
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
            try await CodeFactorTests.deliverMessages(app, clock: clock).last { $0.destination == phone }
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
        let code = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first).code
        var fresh: String?
        try await app.testing().test(
            .POST, API.Auth.stepUp.path(), headers: .bearer(token), body: json(["method": "sms", "code": code])
        ) { response in
            #expect(response.status == .ok)
            fresh = try response.decode(StepUpResponse.self).accessToken.token
        }
        return try #require(fresh)
    }

    @Test func changingThePasswordRevokesOtherSessionsAndRememberedDevices() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            clock.advance(by: 30)
            let (device, _) = try await TrustedDeviceTests.trust(app, secret: secret, clock: clock)
            var remembered = HTTPHeaders.client("10.0.0.1")
            remembered.add(name: "X-Trusted-Device", value: device)
            var other: AuthTokensResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: remembered,
                body: json(["username": "alice", "password": AuthFlowTests.password])
            ) { response in other = try response.decode(AuthTokensResponse.self) }
            let otherSession = try #require(other)

            let wrong = try await Self.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": "not my password", "newPassword": Self.newPassword])
            #expect(wrong.0 == 401)
            #expect(wrong.1?.code == "invalid_credentials")
            let weak = try await Self.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": AuthFlowTests.password, "newPassword": "password"])
            #expect(weak.0 == 422)
            #expect(weak.1?.errors?["newPassword"] != nil)
            #expect(
                try await TrustedDeviceTests.login(app, headers: remembered) == (200, false),
                "refused attempts change nothing")

            let changed = try await Self.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": AuthFlowTests.password, "newPassword": Self.newPassword])
            #expect(changed.0 == 200)
            // The session that changed it goes on; the other one and the remembered device stop.
            _ = try await Self.account(app, token: tokens.accessToken.token)
            try await app.testing().test(
                .GET, API.Account.show.path(), headers: .bearer(otherSession.accessToken.token)
            ) {
                response in #expect(response.status == .unauthorized)
            }
            try await app.testing().test(
                .POST, API.Auth.refresh.path(), headers: jsonHeaders,
                body: json(["refreshToken": otherSession.refreshToken.token])
            ) { response in #expect(response.status == .unauthorized) }
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: remembered,
                body: json(["username": "alice", "password": Self.newPassword])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.body.string.contains("requires2FA"), "the remembered device was revoked")
            }
            #expect(try await TrustedDeviceTests.login(app, headers: remembered).0 == 401, "old password refused")
            let events = try await AuditQueries.count(type: "account.password_changed", on: app)
            #expect(events == 1)
        }
    }

    @Test func wrongCurrentPasswordsAreThrottled() async throws {
        try await withTestApp { app in
            let tokens = try await AuthFlowTests.signUp(app)
            var statuses: [UInt] = []
            for _ in 0..<6 {
                statuses.append(
                    try await Self.put(
                        app, API.Account.changePassword, token: tokens.accessToken.token,
                        ["currentPassword": "guess guess guess", "newPassword": Self.newPassword]
                    ).0)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429])
            let correct = try await Self.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": AuthFlowTests.password, "newPassword": Self.newPassword])
            #expect(correct.0 == 429, "even the right password waits out the limit")
        }
    }

    @Test func aNewPhoneNumberNeedsStepUpAndACodeSentToIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            _ = try await CodeFactorTests.enableSMS(app, tokens: tokens, clock: clock)
            let stale = try await CodeFactorTests.laterCodeSession(app, clock: clock)
            let refused = try await Self.put(
                app, API.Account.changePhone, token: stale, ["phoneNumber": "+442071838750"])
            #expect(refused.0 == 403)
            #expect(refused.1?.code == "step_up_required")
            #expect(try await CodeFactorTests.deliverMessages(app, clock: clock).isEmpty, "no code sent")

            clock.advance(by: 61)
            let token = try await Self.stepUpBySMS(app, token: stale, clock: clock)
            let invalid = try await Self.put(app, API.Account.changePhone, token: token, ["phoneNumber": "12345"])
            #expect(invalid.0 == 422)
            let sent = try await Self.put(app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750"])
            #expect(sent.0 == 202)
            let message = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first)
            #expect(message.destination == "+442071838750", "the code goes to the new number")

            let wrong = try await Self.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750", "code": "000000"])
            #expect(wrong.0 == 401)
            #expect(wrong.1?.attemptsRemaining == 4)
            #expect(try await Self.account(app, token: token).phoneNumber == "+14155550123", "unchanged")
            let elsewhere = try await Self.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838751", "code": message.code])
            #expect(elsewhere.0 == 409, "a code confirms only the number it was sent to")
            #expect(try await Self.account(app, token: token).phoneNumber == "+14155550123")

            clock.advance(by: 61)
            _ = try await Self.put(app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750"])
            let second = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first)
            let confirmed = try await Self.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750", "code": second.code])
            #expect(confirmed.0 == 200)
            #expect(try await Self.account(app, token: token).phoneNumber == "+442071838750")
            #expect(try await AuditQueries.count(type: "account.phone_changed", on: app) == 1)

            // The next login's SMS goes to the new number (an hour on: this test spent the
            // hourly budget of five codes).
            clock.advance(by: 3600)
            _ = try await TOTPSteps.startLogin(app)
            #expect(
                try await CodeFactorTests.deliverMessages(app, clock: clock).map(\.destination) == ["+442071838750"])
        }
    }

    @Test func aPasswordOnlyAccountChangesItsEmailWithinFiveMinutesOfSigningIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            _ = try await AuthFlowTests.signUp(app, "bob")
            // Issue T: an address another account uses is answered like a free one; its owner is
            // told, and no code goes out.
            let taken = try await Self.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "bob@example.com"])
            #expect(taken.0 == 202 && taken.1 == nil)
            let told = try await CodeFactorTests.deliverAll(app, clock: clock)
            #expect(told.map(\.destination) == ["bob@example.com"])
            #expect(told.first.map { $0.body.contains("Nothing changed") && oneTimeCode(in: $0.body) == nil } == true)
            clock.advance(by: 61)
            let sent = try await Self.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "Alice@New.example"])
            #expect(sent.0 == 202)
            let message = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first)
            #expect(message.destination == "alice@new.example")
            clock.advance(by: 60)
            let confirmed = try await Self.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token,
                ["email": "alice@new.example", "code": message.code])
            #expect(confirmed.0 == 200)
            #expect(try await Self.account(app, token: tokens.accessToken.token).email == "alice@new.example")
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["email": "alice@new.example", "password": AuthFlowTests.password])
            ) { response in #expect(response.status == .ok) }

            clock.advance(by: 5 * 60)
            let late = try await Self.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "a@b.example"])
            #expect(late.0 == 403, "more than 5 minutes after signing in")
            #expect(late.1?.code == "step_up_required")
        }
    }

    @Test func stepUpWorksWithAnEmailCodeAndCountsWrongCodes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            try await app.testing().test(
                .POST, API.TwoFactor.emailSetup.path(), headers: .bearer(tokens.accessToken.token)
            ) {
                response in #expect(response.status == .ok)
            }
            let enableCode = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first).code
            try await app.testing().test(
                .POST, API.TwoFactor.emailVerify.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["code": enableCode])
            ) { response in #expect(response.status == .ok) }

            let other = try await CodeFactorTests.laterCodeSession(app, clock: clock)
            try await app.testing().test(
                .POST, API.Auth.stepUpSend.path(), headers: .bearer(other),
                body: json(["method": "sms"])
            ) { response in #expect(response.status == .unprocessableEntity, "SMS is not enabled") }
            clock.advance(by: 61)
            try await app.testing().test(
                .POST, API.Auth.stepUpSend.path(), headers: .bearer(other),
                body: json(["method": "email"])
            ) { response in #expect(response.status == .ok) }
            let code = try #require(try await CodeFactorTests.deliverMessages(app, clock: clock).first).code
            try await app.testing().test(
                .POST, API.Auth.stepUp.path(), headers: .bearer(other),
                body: json(["method": "email", "code": code == "000000" ? "000001" : "000000"])
            ) { response in
                #expect(response.status == .unauthorized)
                try #require(try response.problem().attemptsRemaining == 4)
            }
            var fresh: String?
            try await app.testing().test(
                .POST, API.Auth.stepUp.path(), headers: .bearer(other),
                body: json(["method": "email", "code": code])
            ) { response in
                #expect(response.status == .ok)
                fresh = try response.decode(StepUpResponse.self).accessToken.token
            }
            try await app.testing().test(
                .DELETE, API.TwoFactor.emailDelete.path(), headers: .bearer(try #require(fresh))
            ) {
                response in #expect(response.status == .forbidden, "a factor does not vouch for its own removal")
            }
            let withPassword = try await AuthFlowTests.stepUpWithPassword(app, token: try #require(fresh))
            try await app.testing().test(.DELETE, API.TwoFactor.emailDelete.path(), headers: .bearer(withPassword)) {
                response in #expect(response.status == .ok, "the password and a fresh email code remove it")
            }
        }
    }
}
