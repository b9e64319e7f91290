import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// Honest answers under concurrency (issue V item 9): ten copies of one right code sent at once
/// as step-ups give one success and nine `409 already_used`: never `429 locked` for a factor
/// that is not locked (the finding: 5 of 10 backup-code copies answered a 5-minute lockout
/// while another code worked at once). Run on every database the server suite runs on.
@Suite(.tags(.database)) struct ParallelCodeCopiesTests {
    /// Sends `body` as a step-up ten times at once; each answer's status and problem code.
    static func tenCopies(_ app: Application, token: String, _ body: StepUpRequest) async throws
        -> [(Int, ErrorCode?)]
    {
        let client = app.client()
        return try await withThrowingTaskGroup(of: (Int, ErrorCode?).self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await client.send(API.Auth.stepUp, body, bearer: token)
                        return (200, nil)
                    } catch let refused as APIError {
                        return (refused.status, refused.code)
                    }
                }
            }
            return try await group.reduce(into: [(Int, ErrorCode?)]()) { $0.append($1) }
        }
    }

    static func expectOneSuccessAndCopies(_ answers: [(Int, ErrorCode?)]) {
        #expect(answers.filter { $0.0 == 200 }.count == 1, "\(answers)")
        #expect(answers.filter { $0.0 == 409 && $0.1 == .alreadyUsed }.count == 9, "\(answers)")
        #expect(!answers.contains { $0.0 == 429 }, "no lockout is told: none was set")
    }

    @Test func tenCopiesOfABackupCode() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let session = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            Self.expectOneSuccessAndCopies(
                try await Self.tenCopies(app, token: session, StepUpRequest(method: .backup, code: codes[2])))
            // Another code works at once: nothing was locked, and no slot was kept.
            _ = try await app.client().send(
                API.Auth.stepUp, StepUpRequest(method: .backup, code: codes[3]), bearer: session)
            #expect(try await AuditQueries.count(table: "factor_failures", on: app) == 0)
        }
    }

    @Test func tenCopiesOfAnAuthenticatorAppCode() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let session = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            Self.expectOneSuccessAndCopies(
                try await Self.tenCopies(
                    app, token: session, StepUpRequest(method: .totp, code: try TOTPSteps.code(secret, clock))))
        }
    }

    @Test func tenCopiesOfAnSMSCode() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let session = try await Codes.laterCodeSession(app, clock: clock)
            clock.advance(by: 61)
            _ = try await app.client().send(API.Auth.stepUpSend, StepUpSendRequest(method: .sms), bearer: session)
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).last).code
            Self.expectOneSuccessAndCopies(
                try await Self.tenCopies(app, token: session, StepUpRequest(method: .sms, code: code)))
        }
    }
}
