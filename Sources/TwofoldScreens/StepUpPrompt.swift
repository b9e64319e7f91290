import Foundation
import Observation
import TwofoldAPI
import TwofoldClient

/// The person declined to prove a factor again: the change they asked for is not made.
public struct StepUpDeclined: Error, Sendable, Equatable {
    /// A declined step-up.
    public init() {}
}

/// "Confirm it's you": when the server asks for a step-up before a change, the screen shows
/// this prompt with the methods that can answer, and the call waits until the person gives a
/// code or the password (or cancels). The SDK's `StepUpProviding` on a screen.
@MainActor @Observable
public final class StepUpPrompt {
    /// What the server asked for, while the prompt is shown.
    public struct Question: Sendable, Equatable {
        /// The server's reason (`recentSecondFactor`, `recentPassword`, `otherProof`).
        public let need: String?
        /// The methods that can answer, the password among them when it may.
        public let methods: [FactorMethod]
        /// The question in words.
        public var message: String {
            switch need {
            case "recentPassword": "Enter your password to continue."
            case "otherProof": "Confirm it's you with another factor than the one you're changing."
            default: "Confirm it's you with one of your factors."
            }
        }
    }

    /// The question shown now; `nil` when no change is waiting.
    public private(set) var question: Question?
    /// The method the person picked to answer with.
    public var method: FactorMethod = .totp
    /// The code typed for `method`.
    public var code = CodeEntry()
    /// The password typed, when `method` is the password.
    public var password = ""
    /// Where a code for `method` went (masked), once sent.
    public private(set) var codeSentTo: String?
    /// Why sending a code did not work, in words.
    public private(set) var problem: String?
    private var waiting: CheckedContinuation<StepUpRequest, any Error>?
    private let session: SessionManager?

    /// A prompt for `session`'s step-ups; with the session it can also send an SMS or email code.
    public init(session: SessionManager? = nil) { self.session = session }

    /// Sends a code for `method` (SMS or email) to answer with.
    public func sendCode() async {
        guard method.isSentCode, let session else { return }
        do {
            let sent = try await session.client.send(
                API.Auth.stepUpSend, StepUpSendRequest(method: method), bearer: try await session.accessToken())
            codeSentTo = sent.maskedDestination
            problem = nil
        } catch {
            problem = SignInProblem.of(error).message
        }
    }

    /// Whether "Confirm" does anything: a question is shown and its answer is whole (the
    /// password typed, or every digit of the code).
    public var canConfirm: Bool {
        guard question != nil else { return false }
        return method == .password ? !password.isEmpty : code.isComplete
    }

    /// Answers the question with what the person typed (once `canConfirm`).
    public func confirm() {
        guard canConfirm else { return }
        let proof =
            method == .password
            ? StepUpRequest(method: .password, password: password)
            : StepUpRequest(method: method, code: code.submission)
        finish(.success(proof))
    }

    /// The person cancelled: the change is not made.
    public func cancel() { finish(.failure(StepUpDeclined())) }

    /// Picks the method to answer with, and empties the fields.
    public func choose(_ method: FactorMethod) {
        self.method = method
        code = CodeEntry(for: method)
        password = ""
        codeSentTo = nil
        problem = nil
    }

    fileprivate func ask(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
        // One question at a time: a second change waits its turn by failing fast.
        guard waiting == nil else { throw StepUpDeclined() }
        let factors = methods.filter { [.totp, .backup, .sms, .email].contains($0) }
        let offered: [FactorMethod] =
            switch need {
            case "recentPassword": [.password]
            case "recentSecondFactor": factors
            // A removal: another factor, or the password with a fresh code (the mailbox's always).
            case "otherProof": [.password] + factors + (factors.contains(.email) ? [] : [.email])
            default: factors + [.password]
            }
        question = Question(need: need, methods: offered)
        choose(offered.first ?? .password)
        return try await withCheckedThrowingContinuation { waiting = $0 }
    }

    private func finish(_ result: Result<StepUpRequest, any Error>) {
        let continuation = waiting
        waiting = nil
        question = nil
        password = ""
        code.clear()
        continuation?.resume(with: result)
    }

    /// The prompt as the SDK's step-up provider.
    public nonisolated var provider: some StepUpProviding { Provider(prompt: self) }

    private struct Provider: StepUpProviding {
        let prompt: StepUpPrompt
        func stepUpProof(need: String?, methods: [FactorMethod]) async throws -> StepUpRequest {
            try await prompt.ask(need: need, methods: methods)
        }
    }
}
