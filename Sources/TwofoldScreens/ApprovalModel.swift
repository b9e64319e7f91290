import Foundation
import Observation
import TwofoldAPI
import TwofoldClient
import TwofoldCore

/// The phone's "Approve on your phone" screen (issue Z) on the SDK's `PhoneApprovals`: while the
/// app is in the foreground it waits for a request; a request shows what asks, from where and
/// when, three numbers, "Deny" and "This wasn't me"; the answer is signed by the device key
/// (its Face ID, Touch ID or passcode prompt is the approval).
@MainActor @Observable
public final class ApprovalModel {
    /// What the screen shows.
    public enum Phase: Sendable, Equatable {
        /// Nothing asks; the app listens.
        case idle
        /// A sign-in asks to be approved.
        case asking(PushApprovalDTO)
        /// The answer is on its way (the key's prompt first).
        case working(PushApprovalDTO)
        /// The server took the answer: what it did, in words.
        case answered(PushStatus, String)
    }

    /// What the screen shows now.
    public private(set) var phase: Phase = .idle
    /// What went wrong last, in words (a declined prompt, a request answered elsewhere).
    public private(set) var message: String?
    /// What the account should know (seed 003's suspicious activity: a sign-in from a device or
    /// network it had not used), newest first, as the server last listed them.
    public private(set) var notices: [PhoneNoticeDTO] = []
    private let approvals: PhoneApprovals

    /// The screen for this phone's requests (`approvals`).
    public init(approvals: PhoneApprovals) { self.approvals = approvals }

    /// Looks for a request or a new notice once, waiting up to `wait` seconds (0 to 25) for one.
    public func refresh(wait: Int = 0) async {
        do {
            let answer = try await approvals.check(wait: wait, after: notices.first?.id)
            notices = answer.notices
            if let request = answer.approvals.first {
                phase = .asking(request)
                message = nil
            } else if case .asking = phase {
                // Answered elsewhere, replaced or expired.
                phase = .idle
            }
        } catch is CancellationError {
            return
        } catch {
            message = SignInProblem.of(error).message
        }
    }

    /// Listens while the task runs (the app in the foreground): one long poll after another,
    /// never closer than a second apart, until a request asks. New notices show as they come.
    public func listen() async {
        while !Task.isCancelled {
            if case .asking = phase { return }
            let started = Date()
            await refresh(wait: PushStatusRequest.longestWait)
            let spent = Date().timeIntervalSince(started)
            if spent < 1 { try? await Task.sleep(for: .seconds(1 - spent)) }
        }
    }

    /// Approves with `number`, the one the signing-in screen shows.
    public func approve(_ number: Int) async { await answer(.approve, number: number) }

    /// "Deny": this sign-in does not go on.
    public func deny() async { await answer(.deny, number: nil) }

    /// "This wasn't me": the sign-in ends and the owner is told to change the password.
    public func notMe() async { await answer(.notMe, number: nil) }

    /// Back to listening after an answer.
    public func done() {
        phase = .idle
        message = nil
    }

    private func answer(_ decision: PushApprovalMessage.Decision, number: Int?) async {
        guard case .asking(let request) = phase else { return }
        phase = .working(request)
        do {
            let answer = try await approvals.answer(request, decision, number: number)
            phase = .answered(answer.status, answer.message)
            message = nil
        } catch let failure as DeviceAuthFailure {
            // The prompt was declined: nothing was sent; the request still asks.
            phase = .asking(request)
            message = failure.message
        } catch let error as APIError where error.status == 409 || error.status == 404 {
            phase = .idle
            message = "This request was answered already, or it expired."
        } catch {
            phase = .asking(request)
            message = SignInProblem.of(error).message
        }
    }

    /// "Today 14:02", "Chrome on Linux", "network 203.0.113.x": the lines the request shows.
    public static func lines(_ request: PushApprovalDTO) -> [String] {
        [
            request.purpose == "stepUp"
                ? "\(request.asking), signed in to your account, asks you to confirm it's you."
                : "\(request.asking) wants to sign in to your account.",
            "From \(request.place).",
            "Asked at \(request.createdAt.formatted(date: .omitted, time: .shortened)).",
        ]
    }
}
