import Foundation
import Testing
import TwofoldAPI
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
            var other: AuthTokensResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: remembered,
                body: json(["username": "alice", "password": Accounts.password])
            ) { response in other = try response.decode(AuthTokensResponse.self) }
            let otherSession = try #require(other)

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
                body: json(["username": "alice", "password": Accounts.newPassword])
            ) { response in
                #expect(response.status == .ok)
                #expect(response.body.string.contains("requires2FA"), "the remembered device was revoked")
            }
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
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["email": "alice@new.example", "password": Accounts.password])
            ) { response in #expect(response.status == .ok) }

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
            try await app.testing().test(
                .POST, API.TwoFactor.emailSetup.path(), headers: .bearer(tokens.accessToken.token)
            ) {
                response in #expect(response.status == .ok)
            }
            let enableCode = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
            try await app.testing().test(
                .POST, API.TwoFactor.emailVerify.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["code": enableCode])
            ) { response in #expect(response.status == .ok) }

            let other = try await Codes.laterCodeSession(app, clock: clock)
            try await app.testing().test(
                .POST, API.Auth.stepUpSend.path(), headers: .bearer(other),
                body: json(["method": "sms"])
            ) { response in #expect(response.status == .unprocessableEntity, "SMS is not enabled") }
            clock.advance(by: 61)
            try await app.testing().test(
                .POST, API.Auth.stepUpSend.path(), headers: .bearer(other),
                body: json(["method": "email"])
            ) { response in #expect(response.status == .ok) }
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).first).code
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
            let withPassword = try await Accounts.stepUpWithPassword(app, token: try #require(fresh))
            try await app.testing().test(.DELETE, API.TwoFactor.emailDelete.path(), headers: .bearer(withPassword)) {
                response in #expect(response.status == .ok, "the password and a fresh email code remove it")
            }
        }
    }
}
