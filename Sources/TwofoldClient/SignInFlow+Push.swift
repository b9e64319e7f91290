import Foundation
import TwofoldAPI

extension SignInFlow {
    /// How long one wait for the phone lasts on the server before it answers `pending`.
    static let phoneWait = PushStatusRequest.longestWait

    /// "Approve on your phone": asks the account's phone to approve this sign-in. The step then
    /// carries the request (`approval`), whose number the screen shows; `waitForPhone()` waits.
    @discardableResult
    public func askPhone() async -> SignInState {
        guard case .secondFactor(var step) = state, let flow, step.methods.contains(.push) else { return state }
        step.method = .push
        enter(.working)
        do {
            step.approval = try await client.send(API.Push.start, PushStartRequest(otpFlowId: flow))
            step.problem = nil
            return enter(.secondFactor(step))
        } catch {
            step.approval = nil
            return failed(step, error)
        }
    }

    /// Waits for the phone's answer to the request `askPhone()` made, then signs in when it was
    /// approved; a denial, a wrong number or "This wasn't me" is the step's problem, in the
    /// server's words. Each wait is a long poll the server answers as soon as the phone does;
    /// calls are never closer than a second apart. Cancelling the task stops waiting.
    @discardableResult
    public func waitForPhone(rememberDevice: Bool = false) async -> SignInState {
        guard case .secondFactor(var step) = state, let flow, let approval = step.approval else { return state }
        do {
            while true {
                let asked = Date()
                let answer = try await client.send(
                    API.Push.status,
                    PushStatusRequest(otpFlowId: flow, requestId: approval.requestId, wait: Self.phoneWait))
                guard case .secondFactor(let now) = state, now.approval == approval else { return state }
                switch answer.status {
                case .pending:
                    let spent = Date().timeIntervalSince(asked)
                    if spent < 1 { try await Task.sleep(for: .seconds(1 - spent)) }
                case .approved:
                    enter(.working)
                    let signedIn = try await client.send(
                        API.Push.complete,
                        PushCompleteRequest(
                            otpFlowId: flow, requestId: approval.requestId,
                            trustDevice: rememberDevice && canRememberDevice))
                    return await completed(signedIn)
                default:
                    step.approval = nil
                    step.problem = .refused(.forbidden, answer.message ?? "The phone did not approve this sign-in.")
                    if answer.status == .reported {
                        self.flow = nil
                        return enter(.credentials(step.problem))
                    }
                    return enter(.secondFactor(step))
                }
            }
        } catch is CancellationError {
            return state
        } catch {
            step.approval = nil
            enter(.working)
            return failed(step, error)
        }
    }
}
