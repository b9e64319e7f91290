import Foundation
import SQLKit
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// Codes by text message and email: the outbox delivered, SMS codes turned on, later sessions proved by a code.
enum Codes {
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

    /// Delivers what is queued and returns every message, notices included; the links that
    /// confirm a new account's address only with `verificationLinks` (the accounts of
    /// `Accounts.signUp` start confirmed, and the tests of other messages do not read them).
    static func deliverAll(
        _ app: Application, clock: TestClock, verificationLinks: Bool = false
    ) async throws -> [OutgoingMessage] {
        // Codes an anonymous request sends after its answer are queued first.
        await app.twofold.background.idle()
        let recorder = RecordingProvider()
        let worker = DeliveryWorker(
            store: SQLOutboxStore(database: app.twofold.database), sms: recorder, email: recorder,
            secrets: app.twofold.secrets)
        try await worker.runOnce(now: clock.now, logger: app.logger)
        return recorder.delivered.filter { verificationLinks || $0.subject != EmailVerification.subject }
    }

    /// A session other than the one that enabled SMS or email codes (a factor added in a session
    /// never steps that session up), signed in with the password and the code sent at login;
    /// unless `waits` is `false`, left 6 minutes so its second factor is no longer recent.
    static func laterCodeSession(_ app: Application, clock: TestClock, waits: Bool = true) async throws -> String {
        clock.advance(by: 61)
        let flow = try await TOTPSteps.startLogin(app)
        let code = try #require(try await deliver(app, clock: clock).last).1
        let token = try await app.client().send(
            API.SecondStep.verifyOTP, OTPVerifyRequest(otpFlowId: flow, code: code)
        ).accessToken.token
        if waits { clock.advance(by: 6 * 60) }
        return token
    }

    static func enableSMS(_ app: Application, tokens: AuthTokensResponse, clock: TestClock) async throws -> [String] {
        try await enableSMS(app, token: tokens.accessToken.token, clock: clock)
    }

    static func enableSMS(_ app: Application, token: String, clock: TestClock) async throws -> [String] {
        let client = app.client()
        let sent = try await client.send(
            API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: "+14155550123"), bearer: token)
        #expect(sent.maskedDestination == "+•••••••0123")
        #expect(sent.nextAllowedAt == clock.now.addingTimeInterval(60))
        let code = try #require(try await deliver(app, clock: clock).first).1
        let enabled = try await client.send(API.TwoFactor.smsVerify, CodeRequest(code: code), bearer: token)
        return try #require(enabled.backupCodes)
    }

    static func verifyOTP(_ app: Application, flow: String, code: String) async throws -> (UInt, ProblemBody?) {
        do {
            _ = try await app.client().send(API.SecondStep.verifyOTP, OTPVerifyRequest(otpFlowId: flow, code: code))
            return (200, nil)
        } catch let refused as APIError {
            return (UInt(refused.status), try Accounts.problem(refused))
        }
    }
}
