import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import VaporTesting

/// Backup codes: one used at the second step.
enum BackupCodeSteps {
    static func useCode(
        _ app: Application, flow: String, code: String, path: String = API.SecondStep.verifyBackupCode.path()
    )
        async throws -> (UInt, SecondStepResponse?, ProblemBody?)
    {
        let endpoint = try #require(
            [API.SecondStep.verifyBackupCode, API.SecondStep.verifyBackupCodeSeed000].first { $0.path() == path },
            "\(path) is not a backup-code endpoint")
        do {
            let answer = try await app.client().send(
                endpoint, BackupCodeVerifyRequest(otpFlowId: flow, backupCode: code))
            return (200, answer, nil)
        } catch let refused as APIError {
            return (UInt(refused.status), nil, try Accounts.problem(refused))
        }
    }
}
