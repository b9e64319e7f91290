import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
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
            try await app.testing().test(.GET, API.TwoFactor.status.path(), headers: .bearer(tokens.accessToken.token))
            {
                response in
                try #require(try response.decode(TwoFactorStatus.self).backupCodes.remaining == 10)
            }
        }
    }

    @Test func regeneratingNeedsStepUpAndRetiresTheOldCodes() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let older = try await TOTPSteps.laterSession(app, secret: secret, clock: clock)
            try await app.testing().test(
                .POST, API.TwoFactor.backupCodesRegenerate.path(), headers: .bearer(older)
            ) { response in
                #expect(response.status == .forbidden)
                try #require(try response.problem().code == "step_up_required")
            }
            var stepped: StepUpResponse?
            try await app.testing().test(
                .POST, API.Auth.stepUp.path(), headers: .bearer(older),
                body: json(["method": "totp", "code": try TOTPSteps.code(secret, clock)])
            ) { response in
                #expect(response.status == .ok)
                stepped = try response.decode(StepUpResponse.self)
            }
            var fresh: BackupCodesResponse?
            try await app.testing().test(
                .POST, API.TwoFactor.backupCodesRegenerate.path(),
                headers: .bearer(try #require(stepped).accessToken.token)
            ) { response in
                #expect(response.status == .ok)
                fresh = try response.decode(BackupCodesResponse.self)
            }
            let newCodes = try #require(fresh).backupCodes
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
            try await app.testing().test(.DELETE, API.TwoFactor.totpDelete.path(), headers: .bearer(older)) {
                response in
                #expect(response.status == .forbidden)
            }
            // Step up with a backup code, then remove.
            var stepped: StepUpResponse?
            try await app.testing().test(
                .POST, API.Auth.stepUp.path(), headers: .bearer(older),
                body: json(["method": "backup", "code": codes[3]])
            ) { response in stepped = try response.decode(StepUpResponse.self) }
            try await app.testing().test(
                .DELETE, API.TwoFactor.totpDelete.path(), headers: .bearer(try #require(stepped).accessToken.token)
            ) { response in #expect(response.status == .ok) }
            try #require(try await AuditQueries.count(table: "totp_credentials", on: app) == 0)
            try #require(try await AuditQueries.count(table: "backup_codes", on: app) == 0)
            try #require(try await AuditQueries.count(type: "factor.removed", on: app) == 1)
            // A password alone signs in again.
            try await app.testing().test(
                .POST, API.Auth.login.path(), headers: .client("10.0.0.1"),
                body: json(["username": "alice", "password": Accounts.password])
            ) { response in
                try #require(try response.decode(AuthTokensResponse.self).user.username == "alice")
            }
        }
    }

    @Test func seed002VerifyLoginTakesTheFlowAsBearer() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, codes) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            try await app.testing().test(
                .POST, API.SecondStep.verifyLogin.path(), headers: .bearer(flow),
                body: json(["code": try TOTPSteps.code(secret, clock)])
            ) { response in #expect(response.status == .ok) }
            let second = try await TOTPSteps.startLogin(app)
            try await app.testing().test(
                .POST, API.SecondStep.verifyLogin.path(), headers: jsonHeaders,
                body: json(["code": codes[0], "method": "backup", "tempToken": second])
            ) { response in
                #expect(response.status == .ok)
                try #require(try response.decode(SecondStepResponse.self).backupCodesRemaining == 9)
            }
            try await app.testing().test(
                .POST, API.SecondStep.verifyLogin.path(), headers: jsonHeaders,
                body: json(["code": "123456", "method": "sms", "tempToken": try await TOTPSteps.startLogin(app)])
            ) { response in #expect(response.status == .unprocessableEntity) }
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
            let statuses = try await withThrowingTaskGroup(of: (UInt, String?).self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var result: (UInt, String?) = (0, nil)
                        try await app.testing().test(
                            .POST, API.Auth.stepUp.path(), headers: .bearer(session),
                            body: json(["method": "backup", "code": codes[3]])
                        ) { response in result = (response.status.code, try? response.problem().code) }
                        return result
                    }
                }
                return try await group.reduce(into: [(UInt, String?)]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.0 == 409 && $0.1 == "already_used" }.count == 3, "\(statuses)")
            #expect(try await AuditQueries.count(table: "factor_failures", on: app) == 0, "no failure recorded")
        }
    }
}
