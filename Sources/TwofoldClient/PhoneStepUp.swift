import Foundation
import TwofoldAPI

/// A step-up approved on the phone that holds the account's device key (issue Z): the signed-in
/// screen asks (`ask()`), shows the request's `number`, and waits (`proof(for:)`) while the
/// person picks it on the phone; the answer is the proof `POST /auth/step-up` takes. As a
/// `StepUpProviding`, it does both and hands the request to `show` to put the number on screen.
public struct PhoneStepUp: StepUpProviding {
    private let session: SessionManager
    private let show: @Sendable (PushStartResponse) async -> Void

    /// Step-ups of `session`'s account; `show` puts a request's number on the screen.
    public init(session: SessionManager, show: @escaping @Sendable (PushStartResponse) async -> Void = { _ in }) {
        (self.session, self.show) = (session, show)
    }

    /// Asks the phone: the number to show until the phone answers or `expiresAt` passes.
    public func ask() async throws -> PushStartResponse {
        try await session.client.send(API.Push.stepUpStart, bearer: try await session.accessToken())
    }

    /// Waits for the phone's answer to `started` (long polls, never two within a second): the
    /// proof when it approved with the right number; `PhoneStepUpRefused`, in words, when it
    /// denied, picked another number, said "This wasn't me" or nobody answered in time.
    public func proof(for started: PushStartResponse) async throws -> StepUpRequest {
        while true {
            let began = Date()
            let answer = try await session.client.send(
                API.Push.stepUpStatus,
                PushStepUpStatusRequest(requestId: started.requestId, wait: PushStatusRequest.longestWait),
                bearer: try await session.accessToken())
            switch answer.status {
            case .approved: return StepUpRequest(method: .push, requestId: started.requestId)
            case .pending:
                let spent = Date().timeIntervalSince(began)
                if spent < 1 { try await Task.sleep(for: .seconds(1 - spent)) }
            default:
                throw PhoneStepUpRefused(
                    status: answer.status, message: answer.message ?? "Your phone did not approve this.")
            }
        }
    }

    public func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
        let started = try await ask()
        await show(started)
        return try await proof(for: started)
    }
}

/// The phone did not approve a step-up: why, in words.
public struct PhoneStepUpRefused: Error, Sendable, Equatable {
    public let status: PushStatus
    public let message: String

    public init(status: PushStatus, message: String) { (self.status, self.message) = (status, message) }
}
