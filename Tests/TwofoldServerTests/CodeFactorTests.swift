import Foundation
import SQLKit
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// SMS and email codes, delivered through the outbox to a recording provider.
@Suite struct CodeFactorTests {
    /// Delivers what is queued and returns the 6-digit codes in the delivered texts, by channel.
    static func deliver(_ app: Application, clock: TestClock) async throws -> [(String, String)] {
        try await deliverMessages(app, clock: clock).map { ($0.channel, $0.code) }
    }

    /// Delivers what is queued: each code message's channel, destination and the code in its
    /// text (notices, such as "a sign-in method was added", are delivered and left out).
    static func deliverMessages(_ app: Application, clock: TestClock) async throws
        -> [(channel: String, destination: String, code: String)]
    {
        try await deliverAll(app, clock: clock).filter { $0.body.contains("Your Twofold code") }.map { message in
            let digits = message.body.split(separator: " ").first {
                $0.count >= 6 && $0.prefix(6).allSatisfy(\.isNumber)
            }
            return (message.channel.rawValue, message.destination, String(digits?.prefix(6) ?? ""))
        }
    }

    /// Delivers what is queued and returns every message, notices included.
    static func deliverAll(_ app: Application, clock: TestClock) async throws -> [OutgoingMessage] {
        // Codes an anonymous request sends after its answer are queued first.
        await app.twofold.background.idle()
        let recorder = RecordingProvider()
        let worker = DeliveryWorker(
            store: SQLOutboxStore(database: app.twofold.database), sms: recorder, email: recorder,
            secrets: app.twofold.secrets)
        try await worker.runOnce(now: clock.now, logger: app.logger)
        return recorder.delivered
    }

    /// A session other than the one that enabled SMS or email codes (a factor added in a session
    /// never steps that session up), signed in with the password and the code sent at login;
    /// unless `waits` is `false`, left 6 minutes so its second factor is no longer recent.
    static func laterCodeSession(_ app: Application, clock: TestClock, waits: Bool = true) async throws -> String {
        clock.advance(by: 61)
        let flow = try await TOTPSteps.startLogin(app)
        let code = try #require(try await deliver(app, clock: clock).last).1
        var token: String?
        try await app.testing().test(
            .POST, API.SecondStep.verifyOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow, "code": code])
        ) { response in
            #expect(response.status == .ok)
            token = try response.decode(SecondStepResponse.self).accessToken.token
        }
        if waits { clock.advance(by: 6 * 60) }
        return try #require(token)
    }

    static func enableSMS(_ app: Application, tokens: AuthTokensResponse, clock: TestClock) async throws -> [String] {
        try await enableSMS(app, token: tokens.accessToken.token, clock: clock)
    }

    static func enableSMS(_ app: Application, token: String, clock: TestClock) async throws -> [String] {
        try await app.testing().test(
            .POST, API.TwoFactor.smsSetup.path(), headers: .bearer(token),
            body: json(["phoneNumber": "+14155550123"])
        ) { response in
            #expect(response.status == .ok)
            let sent = try response.decode(CodeSentResponse.self)
            #expect(sent.maskedDestination == "+•••••••0123")
            #expect(sent.nextAllowedAt == clock.now.addingTimeInterval(60))
        }
        let code = try #require(try await deliver(app, clock: clock).first).1
        var enabled: FactorEnabledResponse?
        try await app.testing().test(
            .POST, API.TwoFactor.smsVerify.path(), headers: .bearer(token), body: json(["code": code])
        ) { response in
            #expect(response.status == .ok)
            enabled = try response.decode(FactorEnabledResponse.self)
        }
        return try #require(enabled?.backupCodes)
    }

    static func verifyOTP(_ app: Application, flow: String, code: String) async throws -> (UInt, ProblemBody?) {
        var result: (UInt, ProblemBody?) = (0, nil)
        try await app.testing().test(
            .POST, API.SecondStep.verifyOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow, "code": code])
        ) { response in result = (response.status.code, response.status == .ok ? nil : try response.problem()) }
        return result
    }

    @Test func enableSMSThenSignInWithTheCodeSentAtLogin() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            let backup = try await Self.enableSMS(app, tokens: tokens, clock: clock)
            #expect(backup.count == 10, "the first factor hands out backup codes")

            var challenge: LoginChallengeResponse?
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["username": "alice", "password": AuthFlowTests.password])
            ) { response in challenge = try response.decode(LoginChallengeResponse.self) }
            let flow = try #require(challenge)
            #expect(flow.availableMethods == [.sms, .backup])
            #expect(flow.maskedPhone == "+•••••••0123")
            let delivered = try await Self.deliver(app, clock: clock)
            #expect(delivered.map(\.0) == ["sms"], "an SMS primary sends its code at once")
            try #require(try await Self.verifyOTP(app, flow: flow.otpFlowId, code: "000000").1?.attemptsRemaining == 4)
            try #require(try await Self.verifyOTP(app, flow: flow.otpFlowId, code: delivered[0].1).0 == 200)
            try #require(
                try await Self.verifyOTP(app, flow: flow.otpFlowId, code: delivered[0].1).0 != 200, "used once")
        }
    }

    @Test func resendWaitsSixtySecondsAllowsFiveAnHourAndNeverResetsFailures() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            _ = try await Self.enableSMS(app, tokens: tokens, clock: clock)
            clock.advance(by: 60)
            let flow = try await TOTPSteps.startLogin(app)
            _ = try await Self.deliver(app, clock: clock)
            for _ in 0..<3 { _ = try await Self.verifyOTP(app, flow: flow, code: "111111") }
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
            let fresh = try #require(try await Self.deliver(app, clock: clock).first).1
            // The failure count belongs to the user and factor: 2 more wrong codes lock it.
            try #require(try await Self.verifyOTP(app, flow: flow, code: "111111").1?.attemptsRemaining == 1)
            try #require(try await Self.verifyOTP(app, flow: flow, code: "111111").0 == 429)
            try #require(try await Self.verifyOTP(app, flow: flow, code: fresh).0 == 429)
        }
    }

    @Test func atMostFiveCodesAreSentAnHour() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            _ = try await Self.enableSMS(app, tokens: tokens, clock: clock)  // send 1
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
            let tokens = try await AuthFlowTests.signUp(app)
            _ = try await Self.enableSMS(app, tokens: tokens, clock: clock)
            clock.advance(by: 60)
            let flow = try await TOTPSteps.startLogin(app)
            let first = try #require(try await Self.deliver(app, clock: clock).first).1
            clock.advance(by: 60)
            try await app.testing().test(
                .POST, API.SecondStep.resendOTP.path(), headers: jsonHeaders, body: json(["otpFlowId": flow])
            ) { response in #expect(response.status == .ok) }
            let second = try #require(try await Self.deliver(app, clock: clock).first).1
            if first != second {
                try #require(try await Self.verifyOTP(app, flow: flow, code: first).0 == 401, "replaced by the resend")
            }
            clock.advance(by: 5 * 60)
            let late = try await Self.verifyOTP(app, flow: flow, code: second)
            #expect(late.0 == 401, "the flow and the code expired")
        }
    }

    @Test func codesAreStoredHashedAndTheirMessagesEncrypted() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            try await app.testing().test(
                .POST, API.TwoFactor.smsSetup.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["phoneNumber": "+14155550123"])
            ) { _ in }
            let sql = try #require(app.db as? any SQLDatabase)
            let codeRow = try #require(
                try await sql.raw("SELECT code_hash, destination_ciphertext FROM one_time_codes").first())
            let code = try #require(try await Self.deliver(app, clock: clock).first).1
            try #require(try codeRow.decode(column: "code_hash", as: String.self) != code)
            #expect(!(try codeRow.decode(column: "destination_ciphertext", as: String.self)).contains("4155550123"))
        }
    }

    @Test func emailCodesAndThePrimaryMethod() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            // Adding a factor to an account that has one needs a recent second factor.
            let recent = try await TOTPSteps.laterSession(app, secret: secret, clock: clock, waits: false)
            try await app.testing().test(.POST, API.TwoFactor.emailSetup.path(), headers: .bearer(recent)) {
                response in
                try #require(try response.decode(CodeSentResponse.self).maskedDestination == "a•••@example.com")
            }
            let code = try #require(try await Self.deliver(app, clock: clock).first)
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
                body: json(["username": "alice", "password": AuthFlowTests.password])
            ) { response in challenge = try response.decode(LoginChallengeResponse.self) }
            #expect(challenge?.availableMethods == [.email, .totp, .backup])
            #expect(challenge?.maskedEmail == "a•••@example.com")
            let emailed = try #require(try await Self.deliver(app, clock: clock).first)
            #expect(emailed.0 == "email")
            try #require(
                try await Self.verifyOTP(app, flow: try #require(challenge).otpFlowId, code: emailed.1).0 == 200)
        }
    }

    @Test func removingSMSNeedsStepUp() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await AuthFlowTests.signUp(app)
            let backup = try await Self.enableSMS(app, tokens: tokens, clock: clock)
            let older = try await Self.laterCodeSession(app, clock: clock)
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
            let tokens = try await AuthFlowTests.signUp(app)
            try await app.testing().test(
                .POST, API.TwoFactor.smsSetup.path(), headers: .bearer(tokens.accessToken.token),
                body: json(["phoneNumber": "+14155550123"])
            ) { response in #expect(response.status == .conflict) }
            try #require(try await AuditQueries.count(table: "outbox_messages", on: app) == 0)
        }
    }
}
