import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// SMS and email codes, delivered through the outbox to a recording provider.
@Suite(.tags(.database)) struct CodeFactorTests {
    /// A login answered with tokens where the test expected a second step.
    struct ExpectedSecondStep: Error {}

    @Test func enableSMSThenSignInWithTheCodeSentAtLogin() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let backup = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            #expect(backup.count == 10, "the first factor hands out backup codes")

            let outcome = try await app.client(from: "10.0.0.1").send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            guard case .secondStep(let flow) = outcome else { throw ExpectedSecondStep() }
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
            let client = app.client()
            let refused = try await refusal {
                try await client.send(API.SecondStep.resendOTP, OTPResendRequest(otpFlowId: flow))
            }
            #expect(refused.status == 429)
            #expect(refused.retryAfterHeader == 60)
            clock.advance(by: 60)
            let sent = try await client.send(API.SecondStep.resendOTP, OTPResendRequest(otpFlowId: flow, method: .sms))
            try #require(sent.maskedDestination == "+•••••••0123")
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
            let client = app.client()
            var statuses: [Int] = []
            for _ in 0..<4 {
                clock.advance(by: 61)
                statuses.append(
                    try await status {
                        try await client.send(API.SecondStep.resendOTP, OTPResendRequest(otpFlowId: flow))
                    })
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
            _ = try await app.client().send(API.SecondStep.resendOTP, OTPResendRequest(otpFlowId: flow))
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
            _ = try await app.client().send(
                API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550123"), bearer: tokens.accessToken.token)
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
            let client = app.client()
            try #require(
                try await client.send(API.TwoFactor.emailSetup, bearer: recent).maskedDestination == "a•••@example.com")
            let code = try #require(try await Codes.deliver(app, clock: clock).first)
            #expect(code.0 == "email")
            let enabled = try await client.send(API.TwoFactor.emailVerify, CodeRequest(code: code.1), bearer: recent)
            try #require(enabled.backupCodes == nil, "not the first factor")
            _ = try await client.send(
                API.TwoFactor.primaryMethod, PrimaryMethodRequest(method: .email), bearer: tokens.accessToken.token)
            let refused = try await refusal {
                try await client.send(
                    API.TwoFactor.primaryMethod, PrimaryMethodRequest(method: .sms), bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 422)

            let outcome = try await client.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            guard case .secondStep(let challenge) = outcome else { throw ExpectedSecondStep() }
            #expect(challenge.availableMethods == [.email, .totp, .backup])
            #expect(challenge.maskedEmail == "a•••@example.com")
            let emailed = try #require(try await Codes.deliver(app, clock: clock).first)
            #expect(emailed.0 == "email")
            try #require(try await Codes.verifyOTP(app, flow: challenge.otpFlowId, code: emailed.1).0 == 200)
        }
    }

    @Test func removingSMSNeedsStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let backup = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let older = try await Codes.laterCodeSession(app, clock: clock)
            let client = app.client()
            #expect(try await refusal { try await client.send(API.TwoFactor.smsDelete, bearer: older) }.status == 403)
            let stepped = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .backup, code: backup[0]), bearer: older)
            _ = try await client.send(API.TwoFactor.smsDelete, bearer: stepped.accessToken.token)
            try #require(try await AuditQueries.count(table: "backup_codes", on: app) == 0)
        }
    }

    @Test func switchedOffChannelsAreRefused() async throws {
        try await withTestApp(adjust: { $0.smsProvider = .disabled }) { app in
            let tokens = try await Accounts.signUp(app)
            let refused = try await refusal {
                try await app.client().send(
                    API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550123"),
                    bearer: tokens.accessToken.token)
            }
            #expect(refused.status == 409)
            let sql = try #require(app.db as? any SQLDatabase)
            let row = try await sql.raw("SELECT COUNT(*) AS n FROM outbox_messages WHERE channel = 'sms'").first()
            #expect(try row?.decode(column: "n", as: Int.self) == 0)
        }
    }
}
