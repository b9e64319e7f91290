import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// A forgotten password (issue W item 2) and the address confirmed at registration (item 3), as
/// an attacker would try them: the address no account has, the link used twice or in parallel,
/// the link without the account's second factor, the unconfirmed address.
@Suite(.tags(.database)) struct PasswordResetTests {
    /// Asks for a reset link to `email`; the answer.
    static func forgot(_ app: Application, _ email: String) async throws -> PasswordForgotResponse {
        try await app.client().send(API.PasswordReset.forgot, PasswordForgotRequest(email: email))
    }

    /// The token of the newest reset link delivered to `email`, if one was.
    static func link(_ app: Application, clock: TestClock, to email: String, page: Page = Pages.passwordReset)
        async throws -> String?
    {
        let mail = try await Codes.deliverAll(app, clock: clock, verificationLinks: true).last {
            $0.destination == email && $0.body.contains("/\(page.path)?token=")
        }
        return try mail.map { try RecoverySteps.token(of: page, in: $0) }
    }

    /// The API error `body` throws, or a failed expectation.
    static func refusal(_ body: () async throws -> some Any) async -> APIError? {
        do {
            _ = try await body()
            Issue.record("expected a refusal")
            return nil
        } catch let error as APIError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    /// carol, registered (her address not confirmed yet) and signed in with the password: her
    /// session's tokens, and the token of the confirming link the registration mailed.
    static func carol(_ app: Application, clock: TestClock) async throws -> (AuthTokensResponse, String) {
        let client = app.client()
        _ = try await client.send(
            API.Auth.register,
            RegisterRequest(username: "carol", email: "carol@example.com", password: Accounts.password))
        let link = try #require(try await link(app, clock: clock, to: "carol@example.com", page: Pages.verifyEmail))
        guard
            case .signedIn(let tokens) = try await client.send(
                API.Auth.login, LoginRequest(email: "carol@example.com", password: Accounts.password))
        else { throw ClientAccounts.SecondStepAsked(name: "carol") }
        return (tokens, link)
    }

    static func signIn(_ app: Application, password: String) async throws -> LoginOutcome {
        try await app.client().send(API.Auth.login, LoginRequest(email: "alice@example.com", password: password))
    }

    @Test func everyAddressIsAnsweredAlikeAndOnlyAConfirmedOneGetsALink() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app)  // confirmed
            _ = try await app.client().send(
                API.Auth.register,
                RegisterRequest(username: "carol", email: "carol@example.com", password: Accounts.password))
            _ = try await Codes.deliverAll(app, clock: clock, verificationLinks: true)
            let answers = [
                try await Self.forgot(app, "alice@example.com"), try await Self.forgot(app, "Carol@Example.com"),
                try await Self.forgot(app, "nobody@example.com"),
            ]
            #expect(Set(answers.map(\.message)).count == 1 && answers.allSatisfy(\.accepted))
            let sent = try await Codes.deliverAll(app, clock: clock, verificationLinks: true)
            #expect(sent.map(\.destination) == ["alice@example.com"])
            #expect(sent.first?.body.contains("/\(Pages.passwordReset.path)?token=") == true)

            let malformed = await Self.refusal { try await Self.forgot(app, "not an address") }
            #expect(malformed?.status == 422 && malformed?.problem?.errors?["email"] != nil)
        }
    }

    @Test func aPasswordOnlyAccountResetsWithTheLinkOnceAndIsSignedOutEverywhere() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await Self.forgot(app, "alice@example.com")
            let token = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let client = app.client()
            let options = try await client.send(API.PasswordReset.options, PasswordResetOptionsRequest(token: token))
            #expect(!options.secondFactorRequired && options.availableMethods.isEmpty)
            #expect(options.expiresAt == clock.now.addingTimeInterval(30 * 60))

            // A weak password changes nothing, and the link stays usable.
            let weak = await Self.refusal {
                try await client.send(API.PasswordReset.reset, PasswordResetRequest(token: token, newPassword: "short"))
            }
            #expect(weak?.status == 422 && weak?.problem?.errors?["newPassword"] != nil)

            _ = try await client.send(
                API.PasswordReset.reset, PasswordResetRequest(token: token, newPassword: Accounts.newPassword))
            let again = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset, PasswordResetRequest(token: token, newPassword: "yet another passphrase"))
            }
            #expect(again?.status == 409 && again?.code == .alreadyUsed)

            // The old session is over; the new password signs in, the old one does not.
            let refreshed = await Self.refusal {
                try await client.send(API.Auth.refresh, RefreshRequest(refreshToken: tokens.refreshToken.token))
            }
            #expect(refreshed?.status == 401)
            guard case .signedIn = try await Self.signIn(app, password: Accounts.newPassword) else {
                Issue.record("the new password did not sign in")
                return
            }
            let old = await Self.refusal { try await Self.signIn(app, password: Accounts.password) }
            #expect(old?.status == 401)
            let notices = try await Codes.deliverAll(app, clock: clock)
            #expect(
                notices.contains { $0.subject == "Your password was reset" && $0.destination == "alice@example.com" })
            #expect(try await AuditQueries.count(type: "account.password_reset", on: app) == 1)
        }
    }

    @Test func anAccountWithASecondFactorNeedsItBesideTheLink() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, backupCodes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            _ = try await Self.forgot(app, "alice@example.com")
            let token = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let client = app.client()
            let options = try await client.send(API.PasswordReset.options, PasswordResetOptionsRequest(token: token))
            #expect(options.secondFactorRequired && options.availableMethods == [.totp, .backup])

            // The link alone, an email code, a malformed code: refused, and nothing spent.
            for (method, code) in [(nil, nil), (FactorMethod.email, "123456"), (.totp, "")]
                as [(FactorMethod?, String?)]
            {
                let refused = await Self.refusal {
                    try await client.send(
                        API.PasswordReset.reset,
                        PasswordResetRequest(
                            token: token, newPassword: Accounts.newPassword, method: method, code: code))
                }
                #expect(refused?.status == 422, "\(String(describing: method))")
            }
            // A wrong code counts against the authenticator app, and the link stays usable.
            let wrong = try TOTPSteps.code(secret, clock, offset: 600)
            let refused = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset,
                    PasswordResetRequest(token: token, newPassword: Accounts.newPassword, method: .totp, code: wrong))
            }
            #expect(refused?.code == .invalidCode && refused?.attemptsRemaining == 4)
            let old = try await Self.signIn(app, password: Accounts.password)
            guard case .secondStep = old else {
                Issue.record("the password changed without the factor")
                return
            }
            // A backup code proves it too.
            _ = try await client.send(
                API.PasswordReset.reset,
                PasswordResetRequest(
                    token: token, newPassword: Accounts.newPassword, method: .backup, code: backupCodes[0]))
            guard case .secondStep = try await Self.signIn(app, password: Accounts.newPassword) else {
                Issue.record("the new password did not start a sign-in")
                return
            }
        }
    }

    @Test func parallelResetsOnOneLinkSucceedOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app)
            _ = try await Self.forgot(app, "alice@example.com")
            let token = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await app.client().send(
                                API.PasswordReset.reset,
                                PasswordResetRequest(token: token, newPassword: "parallel passphrase \(index)"))
                            return 200
                        } catch let error as APIError {
                            return error.status
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 != 200 }.allSatisfy { $0 == 409 }, "\(statuses)")
        }
    }

    @Test func aLinkEndsWhenItExpiresOrANewerOneIsSent() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            _ = try await Accounts.signUp(app)
            _ = try await Self.forgot(app, "alice@example.com")
            let first = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            _ = try await Self.forgot(app, "alice@example.com")
            let second = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let client = app.client()
            let replaced = await Self.refusal {
                try await client.send(API.PasswordReset.options, PasswordResetOptionsRequest(token: first))
            }
            #expect(replaced?.code == .alreadyUsed)
            clock.advance(by: 30 * 60 + 1)
            let expired = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset, PasswordResetRequest(token: second, newPassword: Accounts.newPassword))
            }
            #expect(expired?.status == 401 && expired?.code == .expired)
            let unknown = await Self.refusal {
                try await client.send(
                    API.PasswordReset.options, PasswordResetOptionsRequest(token: String(repeating: "A", count: 43)))
            }
            #expect(unknown?.status == 404 && unknown?.code == .notFound)
        }
    }

    @Test func aNewAddressIsConfirmedByItsLinkAndUntilThenGetsNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let (tokens, token) = try await Self.carol(app, clock: clock)
            let bearer = tokens.accessToken.token
            #expect(try await client.send(API.Account.emailStatus, bearer: bearer).verified == false)

            // Unconfirmed: no reset link, no recovery code, no notice of a new factor.
            _ = try await Self.forgot(app, "carol@example.com")
            _ = try await RecoverySteps.start(app, "carol@example.com")
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            #expect(try await Codes.deliverAll(app, clock: clock, verificationLinks: true).isEmpty)

            // Whoever reads the mailbox without the account's session cannot confirm it: not
            // signed in, nor signed in to another account; the link stays usable.
            let anonymous = await Self.refusal {
                try await client.send(API.Account.verifyEmail, EmailVerifyRequest(token: token))
            }
            #expect(anonymous?.status == 401)
            let stranger = try await Accounts.signUp(app, "mallory")
            let other = await Self.refusal {
                try await client.send(
                    API.Account.verifyEmail, EmailVerifyRequest(token: token), bearer: stranger.accessToken.token)
            }
            #expect(other?.status == 403)
            let verified = try await client.send(
                API.Account.verifyEmail, EmailVerifyRequest(token: token), bearer: bearer)
            #expect(verified.verified && verified.email == "carol@example.com")
            let reused = await Self.refusal {
                try await client.send(API.Account.verifyEmail, EmailVerifyRequest(token: token), bearer: bearer)
            }
            #expect(reused?.code == .alreadyUsed)
            #expect(try await client.send(API.Account.emailStatus, bearer: bearer).verified)
            _ = try await Self.forgot(app, "carol@example.com")
            #expect(try await Self.link(app, clock: clock, to: "carol@example.com") != nil)
        }
    }

    @Test func anotherLinkIsSentOnRequestWithinItsBudget() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let client = app.client()
            let (tokens, first) = try await Self.carol(app, clock: clock)
            let bearer = tokens.accessToken.token
            for _ in 0..<3 { _ = try await client.send(API.Account.sendEmailVerification, bearer: bearer) }
            let limited = await Self.refusal {
                try await client.send(API.Account.sendEmailVerification, bearer: bearer)
            }
            #expect(limited?.status == 429)
            let newest = try #require(
                try await Self.link(app, clock: clock, to: "carol@example.com", page: Pages.verifyEmail))
            let replaced = await Self.refusal {
                try await client.send(API.Account.verifyEmail, EmailVerifyRequest(token: first), bearer: bearer)
            }
            #expect(replaced?.code == .alreadyUsed)
            #expect(
                try await client.send(API.Account.verifyEmail, EmailVerifyRequest(token: newest), bearer: bearer)
                    .verified)
        }
    }

    @Test func theMailboxAloneNeverStandsForEmailCodesNorLocksTheAccount() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let bearer = tokens.accessToken.token
            let client = app.client()
            // Email codes as the only factor: the first factor hands out backup codes.
            _ = try await client.send(API.TwoFactor.emailSetup, bearer: bearer)
            let code = try #require(try await Codes.deliver(app, clock: clock).last).1
            let enabled = try await client.send(API.TwoFactor.emailVerify, CodeRequest(code: code), bearer: bearer)
            let backupCodes = try #require(enabled.backupCodes)
            _ = try await Self.forgot(app, "alice@example.com")
            let token = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let options = try await client.send(API.PasswordReset.options, PasswordResetOptionsRequest(token: token))
            #expect(options.secondFactorRequired && options.availableMethods == [.backup])
            let alone = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset, PasswordResetRequest(token: token, newPassword: Accounts.newPassword))
            }
            #expect(alone?.status == 422)

            // Wrong backup codes: five tries from the reset's budget, then none for hours.
            for index in 0..<5 {
                let wrong = await Self.refusal {
                    try await client.send(
                        API.PasswordReset.reset,
                        PasswordResetRequest(
                            token: token, newPassword: Accounts.newPassword, method: .backup,
                            code: "ZZZZ-ZZZ\(index + 2)"))
                }
                // The factor's own refusals (a wrong code; at the fifth, its lock), not the budget's.
                #expect(wrong.map { [.invalidCode, .locked].contains($0.code) } == true, "try \(index)")
            }
            let spent = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset,
                    PasswordResetRequest(
                        token: token, newPassword: Accounts.newPassword, method: .backup, code: backupCodes[0]))
            }
            #expect(spent?.status == 429 && spent?.code == .rateLimited)
            let account = try #require(try await app.twofold.users.user(id: tokens.user.id))
            #expect(account.status == .active)

            // With no backup code left, the link is no way in at all: account recovery is.
            clock.advance(by: 10 * 60)  // past the backup codes' lock
            for backup in backupCodes {
                _ = try await app.twofold.backupCodes.use(backup, userID: account.id, origin: .none)
            }
            _ = try await Self.forgot(app, "alice@example.com")
            let last = try #require(try await Self.link(app, clock: clock, to: "alice@example.com"))
            let none = try await client.send(API.PasswordReset.options, PasswordResetOptionsRequest(token: last))
            #expect(none.secondFactorRequired && none.availableMethods.isEmpty)
            let refused = await Self.refusal {
                try await client.send(
                    API.PasswordReset.reset, PasswordResetRequest(token: last, newPassword: Accounts.newPassword))
            }
            #expect(refused?.status == 403)
        }
    }
}
