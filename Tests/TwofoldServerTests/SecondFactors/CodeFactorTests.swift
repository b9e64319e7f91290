import Foundation
import SQLKit
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// SMS and email codes, delivered through the outbox to a recording provider.
@Suite(.tags(.database)) struct CodeFactorTests {
    @Test func enableSMSThenSignInWithTheCodeSentAtLogin() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let backup = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            #expect(backup.count == 10, "the first factor hands out backup codes")

            var challenge: LoginChallengeResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["username": "alice", "password": Accounts.password])
            ) { response in challenge = try response.decode(LoginChallengeResponse.self) }
            let flow = try #require(challenge)
            #expect(flow.availableMethods == [.sms, .backup])
            #expect(flow.maskedPhone == "+•••••••0123")
            let delivered = try await Codes.deliver(app, clock: clock)
            #expect(delivered.map(\.0) == ["sms"], "an SMS primary sends its code at once")
            try #require(try await Codes.verifyOTP(app, flow: flow.otpFlowId, code: "000000").1?.attemptsRemaining == 4)
            try #require(try await Codes.verifyOTP(app, flow: flow.otpFlowId, code: delivered[0].1).0 == 200)
            try #require(
                try await Codes.verifyOTP(app, flow: flow.otpFlowId, code: delivered[0].1).0 != 200, "used once")
        }
    }

    @Test func resendWaitsSixtySecondsAllowsFiveAnHourAndNeverResetsFailures() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            clock.advance(by: 60)
            let flow = try await TOTPSteps.startLogin(app)
            _ = try await Codes.deliver(app, clock: clock)
            for _ in 0..<3 { _ = try await Codes.verifyOTP(app, flow: flow, code: "111111") }
            try await app.testing().test(
                .POST, API.SecondStep.resendOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow])
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers.first(name: .retryAfter) == "60")
            }
            clock.advance(by: 60)
            try await app.testing().test(
                .POST, API.SecondStep.resendOTP.path(), headers: jsonHeaders,
                body: json(["otpFlowId": flow, "method": "sms"])
            ) { response in
                #expect(response.status == .ok)
                try #require(try response.decode(CodeSentResponse.self).maskedDestination == "+•••••••0123")
            }
            let fresh = try #require(try await Codes.deliver(app, clock: clock).first).1
            // The failure count belongs to the user and factor: 2 more wrong codes lock it.
            try #require(try await Codes.verifyOTP(app, flow: flow, code: "111111").1?.attemptsRemaining == 1)
            try #require(try await Codes.verifyOTP(app, flow: flow, code: "111111").0 == 429)
            try #require(try await Codes.verifyOTP(app, flow: flow, code: fresh).0 == 429)
        }
    }

    @Test func atMostFiveCodesAreSentAnHour() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)  // send 1
            let flow = try await TOTPSteps.startLogin(app)  // send 2, at login
            var statuses: [UInt] = []
            for _ in 0..<4 {
                clock.advance(by: 61)
                try await app.testing().test(
                    .POST, API.SecondStep.resendOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow])
                ) { response in statuses.append(response.status.code) }
            }
            #expect(statuses == [200, 200, 200, 429], "sends 3 to 5 go out, the sixth in the hour does not")
        }
    }

    @Test func aCodeExpiresAfterFiveMinutesAndOnlyTheNewestWorks() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            clock.advance(by: 60)
            let flow = try await TOTPSteps.startLogin(app)
            let first = try #require(try await Codes.deliver(app, clock: clock).first).1
            clock.advance(by: 60)
            try await app.testing().test(
                .POST, API.SecondStep.resendOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow])
            ) { response in #expect(response.status == .ok) }
            let second = try #require(try await Codes.deliver(app, clock: clock).first).1
            if first != second {
                try #require(try await Codes.verifyOTP(app, flow: flow, code: first).0 == 401, "replaced by the resend")
            }
            clock.advance(by: 5 * 60)
            let late = try await Codes.verifyOTP(app, flow: flow, code: second)
            #expect(late.0 == 401, "the flow and the code expired")
        }
    }

    @Test func codesAreStoredHashedAndTheirMessagesEncrypted() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            try await app.testing().test(
                .POST, API.TwoFactor.smsSetup.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["phoneNumber": "+14155550123"])
            ) { _ in }
            let sql = try #require(app.db as? any SQLDatabase)
            let codeRow = try #require(
                try await sql.raw("SELECT code_hash, destination_ciphertext FROM one_time_codes").first())
            let code = try #require(try await Codes.deliver(app, clock: clock).first).1
            try #require(try codeRow.decode(column: "code_hash", as: String.self) != code)
            #expect(!(try codeRow.decode(column: "destination_ciphertext", as: String.self)).contains("4155550123"))
        }
    }

    @Test func emailCodesAndThePrimaryMethod() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            // Adding a factor to an account that has one needs a recent second factor.
            let recent = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            try await app.testing().test(.POST, API.TwoFactor.emailSetup.path(), headers: .bearer(recent)) {
                response in
                try #require(try response.decode(CodeSentResponse.self).maskedDestination == "a•••@example.com")
            }
            let code = try #require(try await Codes.deliver(app, clock: clock).first)
            #expect(code.0 == "email")
            try await app.testing().test(
                .POST, API.TwoFactor.emailVerify.path(), headers: .bearer(recent), body: json(["code": code.1])
            ) { response in
                #expect(response.status == .ok)
                try #require(try response.decode(FactorEnabledResponse.self).backupCodes == nil, "not the first factor")
            }
            try await app.testing().test(
                .PUT, API.TwoFactor.primaryMethod.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["method": "email"])
            ) { response in #expect(response.status == .ok) }
            try await app.testing().test(
                .PUT, API.TwoFactor.primaryMethod.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["method": "sms"])
            ) { response in #expect(response.status == .unprocessableEntity) }

            var challenge: LoginChallengeResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["username": "alice", "password": Accounts.password])
            ) { response in challenge = try response.decode(LoginChallengeResponse.self) }
            #expect(challenge?.availableMethods == [.email, .totp, .backup])
            #expect(challenge?.maskedEmail == "a•••@example.com")
            let emailed = try #require(try await Codes.deliver(app, clock: clock).first)
            #expect(emailed.0 == "email")
            try #require(
                try await Codes.verifyOTP(app, flow: try #require(challenge).otpFlowId, code: emailed.1).0 == 200)
        }
    }

    @Test func removingSMSNeedsStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let backup = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let older = try await Codes.laterCodeSession(app, clock: clock)
            try await app.testing().test(.DELETE, API.TwoFactor.smsDelete.path(), headers: .bearer(older)) {
                response in
                #expect(response.status == .forbidden)
            }
            var stepped: StepUpResponse?
            try await app.testing().test(
                .POST, API.Auth.stepUp.path(), headers: .bearer(older),
                body: json(["method": "backup", "code": backup[0]])
            ) { response in stepped = try response.decode(StepUpResponse.self) }
            try await app.testing().test(
                .DELETE, API.TwoFactor.smsDelete.path(), headers: .bearer(try #require(stepped).accessToken.token)
            ) {
                response in #expect(response.status == .ok)
            }
            try #require(try await AuditQueries.count(table: "backup_codes", on: app) == 0)
        }
    }

    @Test func switchedOffChannelsAreRefused() async throws {
        try await withTestApp(adjust: { $0.smsProvider = .disabled }) { app in
            let tokens = try await Accounts.signUp(app)
            try await app.testing().test(
                .POST, API.TwoFactor.smsSetup.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["phoneNumber": "+14155550123"])
            ) { response in #expect(response.status == .conflict) }
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try await sql.raw("SELECT COUNT(*) AS n FROM outbox_messages WHERE channel = 'sms'").first()
            #expect(try row?.decode(column: "n", as: Int.self) == 0)
        }
    }
}
