import Foundation
import Testing
import TwofoldAPI
import TwofoldCore
import VaporTesting

/// Backup codes: one used at the second step.
enum BackupCodeSteps {
    static func useCode(
        _ app: Application, flow: String, code: String, path: String = API.SecondStep.verifyBackupCode.path()
    )
        async throws -> (UInt, SecondStepResponse?, ProblemBody?)
    {
        var result: (UInt, SecondStepResponse?, ProblemBody?) = (0, nil, nil)
        try await app.testing().test(
            .POST, path, headers: jsonHeaders, body: json(["otpFlowId": flow, "backupCode": code])
        ) {
            response in
            result.0 = response.status.code
            if response.status == .ok {
                result.1 = try response.decode(SecondStepResponse.self)
            } else {
                result.2 = try response.problem()
            }
        }
        return result
    }
}
