import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldScreens
import TwofoldTestSupport

/// The phone's approval screen model (issue Z) on the built server and the virtual phone:
/// listening, a wrong pick, a declined Face ID prompt, then the right number.
@MainActor @Suite struct ApprovalModelTests {
    @Test func theScreenListensShowsTheRequestAndAnswersIt() async throws {
        try await TestServers.withTarget { target in
            let owner = try await PushOwner.make(target, "ria")
            let model = ApprovalModel(approvals: owner.phone)
            await model.refresh()
            #expect(model.phase == .idle && model.message == nil)

            // The screen listens; a sign-in elsewhere asks; the request shows.
            let computer = try await owner.computer(target)
            let listening = Task { await model.listen() }
            var number = try await owner.ask(computer)
            await listening.value
            guard case .asking(let request) = model.phase else {
                Issue.record("no request shown: \(model.phase)")
                return
            }
            #expect(request.choices.contains(number))
            #expect(ApprovalModel.lines(request).contains("From this computer."))
            // Face ID declined: nothing is sent and the request still asks; then approved.
            await owner.virtualPhone.cancelNextPrompt()
            await model.approve(number)
            #expect(model.phase == .asking(request) && model.message != nil)
            await model.approve(number)
            guard case .answered(.approved, _) = model.phase else {
                Issue.record("not approved: \(model.phase)")
                return
            }
            guard case .signedIn = await computer.waitForPhone() else {
                Issue.record("the computer was not signed in")
                return
            }
            model.done()

            // Another sign-in; a wrong pick is refused in words.
            let another = try await owner.computer(target)
            number = try await owner.ask(another)
            await model.refresh(wait: 10)
            guard case .asking(let again) = model.phase else {
                Issue.record("no request shown: \(model.phase)")
                return
            }
            await model.approve(again.choices.first { $0 != number } ?? 0)
            guard case .answered(.wrongNumber, let words) = model.phase else {
                Issue.record("not refused: \(model.phase)")
                return
            }
            #expect(words.contains("not the number on the screen"))
        }
    }
}
