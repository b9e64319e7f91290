import Foundation
import TwofoldAPI

extension SessionManager {
    /// How many step-ups one call may take: a removal proven by "the password with a fresh code"
    /// asks twice (the password, then the code).
    static let stepUpsPerCall = 2

    /// Runs `call` with a current access token. A `401` refreshes the session and runs it again,
    /// once; a `403 step_up_required` steps the session up with a proof from `stepUp` and runs it
    /// again, up to `stepUpsPerCall` times. Without `stepUp` the refusal is thrown as it came.
    public nonisolated func authorized<T: Sendable>(
        stepUp: (any StepUpProviding)?, _ call: @Sendable (String) async throws -> T
    ) async throws -> T {
        var token = try await accessToken()
        var refreshed = false
        var stepUps = 0
        while true {
            do {
                return try await call(token)
            } catch let error as APIError where error.status == 401 && !refreshed {
                refreshed = true
                token = try await refresh().accessToken.token
            } catch let error as APIError where error.code == .stepUpRequired && stepUps < Self.stepUpsPerCall {
                guard let stepUp else { throw error }
                stepUps += 1
                let methods = try await client.send(API.TwoFactor.mfaStatus, bearer: token).methods
                let proof = try await stepUp.stepUpProof(need: error.problem?.errors?["stepUp"], methods: methods)
                let answer = try await client.send(API.Auth.stepUp, proof, bearer: token)
                await steppedUp(answer.accessToken)
                token = answer.accessToken.token
            }
        }
    }
}
