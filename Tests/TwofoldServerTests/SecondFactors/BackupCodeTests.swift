import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport
import VaporTesting

@Suite struct BackupCodeTests {
    @Test func eachCodeWorksOnceWithNormalisedInputAndWarnsWhenFewAreLeft() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (_, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let bearer = tokens.accessToken.token
            #expect(try await app.client().send(API.TwoFactor.status, bearer: bearer).backupCodes.low == false)
            // Lower case, spaces instead of the dash: still the same code (seed 000).
            let typed = codes[0].lowercased().replacingOccurrences(of: "-", with: " ")
            let first = try await BackupCodeSteps.useCode(app, flow: try await TOTPSteps.startLogin(app), code: typed)
            #expect(first.0 == 200)
            #expect(first.1?.backupCodesRemaining == 9)
            #expect(first.1?.backupCodesLow == false)

            // Sent again a moment later (a retry, a double tap): a duplicate, not a guess (issue T).
            let again = try await BackupCodeSteps.useCode(
                app, flow: try await TOTPSteps.startLogin(app), code: codes[0])
            #expect(again.0 == 409 && again.2?.code == "already_used")
            clock.advance(by: 121)
            let later = try await BackupCodeSteps.useCode(
                app, flow: try await TOTPSteps.startLogin(app), code: codes[0])
            #expect(later.0 == 401 && later.2?.code == "invalid_code", "later, a used code is a wrong one")

            for (index, code) in codes[1...6].enumerated() {
                let path =
                    index % 2 == 0
                    ? API.SecondStep.verifyBackupCodeSeed000.path() : API.SecondStep.verifyBackupCode.path()
                let result = try await BackupCodeSteps.useCode(
                    app, flow: try await TOTPSteps.startLogin(app), code: code, path: path)
                #expect(result.0 == 200)
            }
            let seventh = try await BackupCodeSteps.useCode(
                app, flow: try await TOTPSteps.startLogin(app), code: codes[7])
            #expect(seventh.1?.backupCodesRemaining == 2)
            #expect(seventh.1?.backupCodesLow == true)
            // The settings say so too (the app's warning reads it).
            let status = try await app.client().send(API.TwoFactor.status, bearer: bearer).backupCodes
            #expect(status.remaining == 2 && status.low == true)
        }
    }

    @Test func malformedCodesAreWrongCodesAndChangeNothing() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            _ = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            for code in ["", "ABCD", "0000-0000", String(repeating: "A", count: 500)] {
                let result = try await BackupCodeSteps.useCode(app, flow: flow, code: code)
                #expect([401, 422].contains(result.0), "\(code.prefix(10))")
            }
            let factors = try await app.client().send(API.TwoFactor.status, bearer: tokens.accessToken.token)
            try #require(factors.backupCodes.remaining == 10)
        }
    }

    @Test func regeneratingNeedsStepUpAndRetiresTheOldCodes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let older = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            let client = app.client()
            let refused = try await refusal {
                try await client.send(API.TwoFactor.backupCodesRegenerate, bearer: older)
            }
            #expect(refused.status == 403)
            try #require(refused.code == .stepUpRequired)
            let stepped = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .totp, code: try TOTPSteps.code(secret, clock)), bearer: older)
            let newCodes = try await client.send(
                API.TwoFactor.backupCodesRegenerate, bearer: stepped.accessToken.token
            ).backupCodes
            #expect(newCodes.count == 10 && Set(newCodes).isDisjoint(with: codes))
            try #require(
                try await BackupCodeSteps.useCode(app, flow: try await TOTPSteps.startLogin(app), code: codes[0]).0
                    == 401)
            try #require(
                try await BackupCodeSteps.useCode(app, flow: try await TOTPSteps.startLogin(app), code: newCodes[0]).0
                    == 200)
        }
    }
}

@Suite struct FactorRemovalTests {
    @Test func removingTheAuthenticatorNeedsStepUpAndPurgesEverything() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let older = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            let client = app.client()
            #expect(try await refusal { try await client.send(API.TwoFactor.totpDelete, bearer: older) }.status == 403)
            // Step up with a backup code, then remove.
            let stepped = try await client.send(
                API.Auth.stepUp, StepUpRequest(method: .backup, code: codes[3]), bearer: older)
            _ = try await client.send(API.TwoFactor.totpDelete, bearer: stepped.accessToken.token)
            try #require(try await AuditQueries.count(table: "totp_credentials", on: app) == 0)
            try #require(try await AuditQueries.count(table: "backup_codes", on: app) == 0)
            try #require(try await AuditQueries.count(type: "factor.removed", on: app) == 1)
            // A password alone signs in again.
            let outcome = try await client.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            guard case .signedIn(let signedIn) = outcome else { throw ClientAccounts.SecondStepAsked(name: "alice") }
            try #require(signedIn.user.username == "alice")
        }
    }

    @Test func seed002VerifyLoginTakesTheFlowAsBearer() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            let client = app.client()
            let code = try TOTPSteps.code(secret, clock)
            _ = try await client.send(API.SecondStep.verifyLogin, MFAVerifyLoginRequest(code: code), bearer: flow)
            let second = try await TOTPSteps.startLogin(app)
            let answer = try await client.send(
                API.SecondStep.verifyLogin, MFAVerifyLoginRequest(code: codes[0], method: .backup, tempToken: second))
            try #require(answer.backupCodesRemaining == 9)
            let third = try await TOTPSteps.startLogin(app)
            let refused = try await refusal {
                try await client.send(
                    API.SecondStep.verifyLogin, MFAVerifyLoginRequest(code: "123456", method: .sms, tempToken: third))
            }
            #expect(refused.status == 422)
        }
    }

    /// Issue T: the same backup code sent twice at once on step-up is used once; the other copy
    /// is `409 already_used`, not a wrong code counted toward a lock.
    @Test(.tags(.database)) func aDuplicateStepUpCodeIsAlreadyUsedNotAFailure() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let session = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            let client = app.client()
            let statuses = try await withThrowingTaskGroup(of: (Int, ErrorCode?).self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        do {
                            _ = try await client.send(
                                API.Auth.stepUp, StepUpRequest(method: .backup, code: codes[3]), bearer: session)
                            return (200, nil)
                        } catch let refused as APIError {
                            return (refused.status, refused.code)
                        }
                    }
                }
                return try await group.reduce(into: [(Int, ErrorCode?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 409 && $0.1 == .alreadyUsed }.count == 3, "\(statuses)")
            #expect(try await AuditQueries.count(table: "factor_failures", on: app) == 0, "no failure recorded")
        }
    }
}
