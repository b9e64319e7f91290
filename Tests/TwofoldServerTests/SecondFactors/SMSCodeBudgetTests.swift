import Foundation
import Testing
import TwofoldAPI
import VaporTesting

@testable import TwofoldServer

/// SMS codes against strangers: anonymous sends spend their own budget, not the owner's; many
/// addresses cannot flood the owner's phone; wrong sign-in codes lock only the stranger's tries;
/// an added phone is told to the old one, masked.
@Suite(.tags(.database)) struct SMSCodeBudgetTests {
    /// Item 5, issue T: a stranger's SMS sign-in requests spend a budget of their own client
    /// scope, never the user's, nor the user's own SMS sign-in budget.
    @Test func anonymousSendsDoNotSpendTheUsersCodeBudget() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: recent)
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            clock.advance(by: 3600)
            _ = try await Codes.deliverAll(app, clock: clock)
            for _ in 0..<6 {
                clock.advance(by: 61)
                _ = try await DeviceKeySteps.post(
                    app, API.DeviceKeys.requestOTP.path(), ["username": "alice"], from: "10.7.0.9")
            }
            #expect(try await Codes.deliverMessages(app, clock: clock).count == 5, "their own budget")
            // The owner, from their own address, still gets an SMS sign-in code, and a login code.
            _ = try await DeviceKeySteps.post(
                app, API.DeviceKeys.requestOTP.path(), ["username": "alice"], from: "10.0.0.1")
            _ = try await TOTPSteps.startLogin(app)
            #expect(try await Codes.deliverMessages(app, clock: clock).count == 2)
        }
    }

    /// Review of issue T, finding 3: per-scope budgets do not lift the ceiling: strangers from
    /// many addresses get at most four budgets' worth of codes sent to the owner's phone an hour.
    @Test func manyAddressesCannotFloodTheOwnersPhone() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            try await Accounts.verifyPhone(app, token: tokens.accessToken.token, clock: clock)
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: tokens.accessToken.token)
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            _ = try await Codes.deliverAll(app, clock: clock)
            for index in 0..<30 {
                _ = try await DeviceKeySteps.post(
                    app, API.DeviceKeys.requestOTP.path(), ["username": "alice"], from: "10.9.\(index).1")
            }
            #expect(try await Codes.deliverMessages(app, clock: clock).count == 20)
        }
    }

    /// Item 3, issue T: a stranger's wrong SMS sign-in codes lock only the stranger's own tries
    /// (their client scope, an IPv6 /64 as one), for 5 minutes each time, never growing, and
    /// are answered exactly as wrong codes; the owner signs in meanwhile, and the account is
    /// never locked.
    @Test func wrongSMSSignInCodesLockOnlyTheStrangersTries() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            let enrolled = try await DeviceKeySteps.post(
                app, API.DeviceKeys.enroll.path(), ["username": "alice", "method": "smsOTP", "deviceId": "old-phone"],
                token: recent)
            #expect(enrolled.0 == 200, "\(enrolled.1)")
            _ = try await Codes.deliverAll(app, clock: clock)
            func send(from address: String) async throws -> String {
                clock.advance(by: 61)
                let sent = try await DeviceKeySteps.post(
                    app, API.DeviceKeys.requestOTP.path(), ["username": "alice"], from: address)
                #expect(sent.0 == 200, "\(sent.1)")
                return try #require(try await Codes.deliver(app, clock: clock).last).1
            }
            func verify(_ code: String, from address: String) async throws -> (UInt, String) {
                try await DeviceKeySteps.post(
                    app, API.DeviceKeys.verifyOTP.path(), ["username": "alice", "otp": code], from: address)
            }
            // The stranger moves through one /64; it is one scope.
            let stranger = (1...9).map { "2001:db8:7:1::\($0)" }
            func lockOut() async throws -> String {
                let code = try await send(from: stranger[0])
                var answers: Set<String> = []
                for index in 0..<6 {
                    let wrong = try await verify(code == "000000" ? "111111" : "000000", from: stranger[index + 1])
                    #expect(wrong.0 == 401, "\(wrong.1)")
                    answers.insert(wrong.1)
                }
                #expect(answers.count == 1, "locked or not, one answer: \(answers)")
                return code
            }
            let owners = try await send(from: "192.0.2.10")
            let strangers = try await lockOut()
            #expect(try await verify(strangers, from: stranger[8]).0 == 401, "locked: even the right code")
            #expect(try await verify(owners, from: "192.0.2.10").0 == 200, "the owner is not locked out")
            clock.advance(by: 5 * 60)
            _ = try await lockOut()
            clock.advance(by: 5 * 60)
            let after = try await send(from: stranger[0])
            #expect(try await verify(after, from: stranger[1]).0 == 200, "the second lock lasted 5 minutes too")
            // The account itself was never locked: the password still signs in.
            let flow = try await TOTPSteps.startLogin(app)
            #expect(!flow.isEmpty)
        }
    }

    /// Item 1: a factor added to the account is told at the destinations on file before the
    /// change, with the new number masked.
    @Test func anAddedPhoneIsToldToTheOldOneMasked() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Codes.enableSMS(app, tokens: tokens, clock: clock)
            let recent = try await Codes.laterCodeSession(app, clock: clock, waits: false)
            _ = try await Codes.deliverAll(app, clock: clock)
            clock.advance(by: 61)
            let setup = try await DeviceKeySteps.post(
                app, API.TwoFactor.smsSetup.path(), ["phoneNumber": "+447700900456"], token: recent)
            #expect(setup.0 == 200, "\(setup.1)")
            let code = try #require(try await Codes.deliverMessages(app, clock: clock).last)
            #expect(code.destination == "+447700900456")
            let verified = try await DeviceKeySteps.post(
                app, API.TwoFactor.smsVerify.path(), ["code": code.code], token: recent)
            #expect(verified.0 == 200, "\(verified.1)")
            let notices = try await Codes.deliverAll(app, clock: clock)
            let toOldPhone = try #require(notices.first { $0.channel == .sms && $0.destination == "+14155550123" })
            #expect(toOldPhone.body.contains("SMS codes to +••••••••0456"), "\(toOldPhone.body)")
            #expect(notices.allSatisfy { !$0.body.contains("447700900456") }, "the new number is masked")
            #expect(notices.contains { $0.channel == .email && $0.destination == "alice@example.com" })
        }
    }
}
