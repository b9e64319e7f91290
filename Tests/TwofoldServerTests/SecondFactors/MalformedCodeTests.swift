import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import VaporTesting

@testable import TwofoldServer

/// A typo is not a guess (issue W item 4): a code of the wrong shape is refused with `422` before
/// it can cost one of the five tries, on every path that checks a code.
@Suite struct MalformedCodeTests {
    @Test func malformedCodesCostNoTry() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let tokens = try await Accounts.signUp(app)
            let (secret, _) = try await TOTPSteps.enable(app, tokens: tokens, clock: clock)
            let flow = try await TOTPSteps.startLogin(app)
            for typo in ["12", "not a code!", "1234567890", "12345a"] {
                let (status, problem) = try await TOTPSteps.validate(app, flow: flow, code: typo)
                #expect(status == 422 && problem?.errors?["code"] != nil, "\(typo)")
            }
            // Spaces are no typo: "123 456" is read as its digits.
            let wrong = try TOTPSteps.code(secret, clock, offset: 600)
            let (spaced, spacedProblem) = try await TOTPSteps.validate(
                app, flow: flow, code: String(wrong.prefix(3)) + " " + String(wrong.suffix(3)))
            #expect(spaced == 401 && spacedProblem?.attemptsRemaining == 4, "the typos cost tries")

            // Backup codes: the wrong shape is refused before it takes a slot.
            let client = app.client()
            for typo in ["XYZ", "ABCD-EFGH-IJKL", "ab!d-efgh"] {
                let refused = try await refusal {
                    try await client.send(
                        API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: flow, backupCode: typo))
                }
                #expect(refused.status == 422, "\(typo)")
            }
            let wrongCode = try await refusal {
                try await client.send(
                    API.SecondStep.verifyBackupCode, BackupCodeVerifyRequest(otpFlowId: flow, backupCode: "ZZZZ-ZZZZ"))
            }
            #expect(wrongCode.attemptsRemaining == 4)
        }
    }
}
