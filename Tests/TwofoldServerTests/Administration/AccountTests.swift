import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// The signed-in user's account: password, phone and email changes, and step-up by SMS/email.
@Suite(.tags(.database)) struct AccountTests {
    @Test func changingThePasswordRevokesOtherSessionsAndRememberedDevices() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            clock.advance(by: 30)
            let (device, _) = try await RememberedDeviceSteps.trust(app, secret: secret, clock: clock)
            var remembered = HTTPHeaders.client("10.0.0.1")
            remembered.add(name: "X-Trusted-Device", value: device)
            let client = app.client()
            let other = try await client.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password),
                headers: ["X-Trusted-Device": device])
            guard case .signedIn(let otherSession) = other else { throw ClientAccounts.SecondStepAsked(name: "alice") }

            let wrong = try await Accounts.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": "not my password", "newPassword": Accounts.newPassword])
            #expect(wrong.0 == 401)
            #expect(wrong.1?.code == "invalid_credentials")
            let weak = try await Accounts.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": Accounts.password, "newPassword": "password"])
            #expect(weak.0 == 422)
            #expect(weak.1?.errors?["newPassword"] != nil)
            #expect(
                try await RememberedDeviceSteps.login(app, headers: remembered) == (200, false),
                "refused attempts change nothing")

            let changed = try await Accounts.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": Accounts.password, "newPassword": Accounts.newPassword])
            #expect(changed.0 == 200)
            // The session that changed it goes on; the other one and the remembered device stop.
            _ = try await Accounts.account(app, token: tokens.accessToken.token)
            #expect(
                try await refusal { try await client.send(API.Account.show, bearer: otherSession.accessToken.token) }
                    .status == 401)
            #expect(
                try await refusal {
                    try await client.send(
                        API.Auth.refresh, RefreshRequest(refreshToken: otherSession.refreshToken.token))
                }.status == 401)
            let again = try await client.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.newPassword),
                headers: ["X-Trusted-Device": device])
            var askedForSecondStep = false
            if case .secondStep = again { askedForSecondStep = true }
            #expect(askedForSecondStep, "the remembered device was revoked")
            #expect(try await RememberedDeviceSteps.login(app, headers: remembered).0 == 401, "old password refused")
            let events = try await AuditQueries.count(type: "account.password_changed", on: app)
            #expect(events == 1)
        }
    }

    @Test func wrongCurrentPasswordsAreThrottled() async throws {
        try await withTestApp { app in
            let tokens = try await Accounts.signUp(app)
            var statuses: [UInt] = []
            for _ in 0..<6 {
                statuses.append(
                    try await Accounts.put(
                        app, API.Account.changePassword, token: tokens.accessToken.token,
                        ["currentPassword": "guess guess guess", "newPassword": Accounts.newPassword]
                    ).0)
            }
            #expect(statuses == [401, 401, 401, 401, 401, 429])
            let correct = try await Accounts.put(
                app, API.Account.changePassword, token: tokens.accessToken.token,
                ["currentPassword": Accounts.password, "newPassword": Accounts.newPassword])
            #expect(correct.0 == 429, "even the right password waits out the limit")
        }
    }

    @Test func aNewPhoneNumberNeedsStepUpAndACodeSentToIt() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let stale = try await Codes.laterCodeSession(app, clock: clock)
            let refused = try await Accounts.put(
                app, API.Account.changePhone, token: stale, ["phoneNumber": "+442071838750"])
            #expect(refused.0 == 403)
            #expect(refused.1?.code == "step_up_required")
            #expect(try await Codes.deliverMessages(app, clock: clock).isEmpty, "no code sent")

            clock.advance(by: 61)
            let token = try await Accounts.stepUpBySMS(app, token: stale, clock: clock)
            let invalid = try await Accounts.put(app, API.Account.changePhone, token: token, ["phoneNumber": "12345"])
            #expect(invalid.0 == 422)
            let sent = try await Accounts.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750"])
            #expect(sent.0 == 202)
            let message = try #require(try await Codes.deliverMessages(app, clock: clock).first)
            #expect(message.destination == "+442071838750", "the code goes to the new number")

            let wrong = try await Accounts.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750", "code": "000000"])
            #expect(wrong.0 == 401)
            #expect(wrong.1?.attemptsRemaining == 4)
            #expect(try await Accounts.account(app, token: token).phoneNumber == "+14155550123", "unchanged")
            let elsewhere = try await Accounts.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838751", "code": message.code])
            #expect(elsewhere.0 == 409, "a code confirms only the number it was sent to")
            #expect(try await Accounts.account(app, token: token).phoneNumber == "+14155550123")

            clock.advance(by: 61)
            _ = try await Accounts.put(app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750"])
            let second = try #require(try await Codes.deliverMessages(app, clock: clock).first)
            let confirmed = try await Accounts.put(
                app, API.Account.changePhone, token: token, ["phoneNumber": "+442071838750", "code": second.code])
            #expect(confirmed.0 == 200)
            #expect(try await Accounts.account(app, token: token).phoneNumber == "+442071838750")
            #expect(try await AuditQueries.count(type: "account.phone_changed", on: app) == 1)

            // The next login's SMS goes to the new number (an hour on: this test spent the
            // hourly budget of five codes).
            clock.advance(by: 3600)
            _ = try await TOTPSteps.startLogin(app)
            #expect(
                try await Codes.deliverMessages(app, clock: clock).map(\.destination) == ["+442071838750"])
        }
    }

    @Test func aPasswordOnlyAccountChangesItsEmailWithinFiveMinutesOfSigningIn() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Accounts.signUp(app, "bob")
            // Issue T: an address another account uses is answered like a free one; its owner is
            // told, and no code goes out.
            let taken = try await Accounts.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "bob@example.com"])
            #expect(taken.0 == 202 && taken.1 == nil)
            let told = try await Codes.deliverAll(app, clock: clock)
            #expect(told.map(\.destination) == ["bob@example.com"])
            #expect(told.first.map { $0.body.contains("Nothing changed") && oneTimeCode(in: $0.body) == nil } == true)
            clock.advance(by: 61)
            let sent = try await Accounts.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "Alice@New.example"])
            #expect(sent.0 == 202)
            let message = try #require(try await Codes.deliverMessages(app, clock: clock).first)
            #expect(message.destination == "alice@new.example")
            clock.advance(by: 60)
            let confirmed = try await Accounts.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token,
                ["email": "alice@new.example", "code": message.code])
            #expect(confirmed.0 == 200)
            #expect(try await Accounts.account(app, token: tokens.accessToken.token).email == "alice@new.example")
            _ = try await app.client(from: "10.0.0.1").send(
                API.Auth.login, LoginRequest(email: "alice@new.example", password: Accounts.password))

            clock.advance(by: 5 * 60)
            let late = try await Accounts.put(
                app, API.Account.changeEmail, token: tokens.accessToken.token, ["email": "a@b.example"])
            #expect(late.0 == 403, "more than 5 minutes after signing in")
            #expect(late.1?.code == "step_up_required")
        }
    }

    @Test func stepUpWorksWithAnEmailCodeAndCountsWrongCodes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let client = app.client()
            _ = try await client.send(API.TwoFactor.emailSetup, bearer: tokens.accessToken.token)
            let enableCode = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
            _ = try await client.send(
                API.TwoFactor.emailVerify, CodeRequest(code: enableCode), bearer: tokens.accessToken.token)

            let other = try await Codes.laterCodeSession(app, clock: clock)
            let smsRefused = try await refusal {
                try await client.send(API.Auth.stepUpSend, StepUpSendRequest(method: .sms), bearer: other)
            }
            #expect(smsRefused.status == 422, "SMS is not enabled")
            clock.advance(by: 61)
            _ = try await client.send(API.Auth.stepUpSend, StepUpSendRequest(method: .email), bearer: other)
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
            let wrong = try await refusal {
                try await client.send(
                    API.Auth.stepUp, StepUpRequest(method: .email, code: code == "000000" ? "000001" : "000000"),
                    bearer: other)
            }
            #expect(wrong.status == 401)
            try #require(wrong.attemptsRemaining == 4)
            let fresh = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .email, code: code), bearer: other
            ).accessToken.token
            #expect(
                try await refusal { try await client.send(API.TwoFactor.emailDelete, bearer: fresh) }.status == 403,
                "a factor does not vouch for its own removal")
            let withPassword = try await Accounts.stepUpWithPassword(app, token: fresh)
            #expect(
                try await status { try await client.send(API.TwoFactor.emailDelete, bearer: withPassword) } == 200,
                "the password and a fresh email code remove it")
        }
    }
}
