import Foundation
import TwofoldAPI
import TwofoldClient

extension Scenarios {
    /// Issue Z: "Approve on your phone". A computer signs in with the password and asks the
    /// phone; the phone, holding the account's key behind Face ID, picks the number the computer
    /// shows (signed in); on a second sign-in it picks another number (refused).
    static let push = Scenario(number: 13, name: "Approve on your phone (push)", run: approveOnThePhone)

    static func approveOnThePhone(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: .faceID)
        try await enroll(
            account, "enrol the phone's key behind Face ID", protection: .biometric, expecting: .enrolled(.biometric))
        let phone = PhoneApprovals(session: account.session, signer: account.flows.signer(username: account.username))
        let computer = SignInFlow(
            client: account.client, session: SessionManager(client: account.client, store: MemoryTokenStore()))

        func ask() async throws -> (number: Int, shown: PushApprovalDTO) {
            let state = await computer.askPhone()
            guard case .secondFactor(let step) = state, let approval = step.approval else {
                throw ScenarioFailure(action: "ask the phone from the computer", outcome: words(state))
            }
            account.log.record("ask the phone from the computer", "the screen shows \(approval.number)")
            guard let shown = try await phone.waiting(wait: 10).first else {
                throw ScenarioFailure(action: "the phone lists the request", outcome: "nothing waits")
            }
            try account.log.check(
                "the phone shows three numbers, the screen's among them",
                shown.choices.count == 3 && shown.choices.contains(approval.number),
                "\(shown.choices.map(String.init).joined(separator: ", ")), from \(shown.place) (\(shown.asking))")
            return (approval.number, shown)
        }

        let state = await computer.signIn(account.username, password: account.password)
        guard case .secondFactor(let step) = state else {
            throw ScenarioFailure(action: "sign in on the computer with the password", outcome: words(state))
        }
        try account.log.check(
            "the computer offers approval on the phone", step.methods.contains(.push),
            step.methods.map(\.rawValue).joined(separator: ", "))

        var asked = try await ask()
        let approved = try await phone.answer(asked.shown, .approve, number: asked.number)
        let prompt = await account.phone.prompts.last
        try account.log.check(
            "the phone picks the screen's number after Face ID", approved.status == .approved && prompt == .biometric,
            "\(approved.message) (\(prompt?.rawValue ?? "no") prompt)")
        let done = await computer.waitForPhone()
        guard case .signedIn(let user) = done, user.username == account.username else {
            throw ScenarioFailure(action: "the computer is signed in", outcome: words(done))
        }
        account.log.record("the computer is signed in", "signed in as \(user.username)")

        // A second sign-in; the phone picks another number: refused, and push is off for now.
        let second = await computer.signIn(account.username, password: account.password)
        guard case .secondFactor = second else {
            throw ScenarioFailure(action: "sign in again with the password", outcome: words(second))
        }
        asked = try await ask()
        let wrong = asked.shown.choices.first { $0 != asked.number }
        let refused = try await phone.answer(asked.shown, .approve, number: wrong)
        try account.log.check("the phone picks another number", refused.status == .wrongNumber, refused.message)
        let afterWrong = await computer.waitForPhone()
        guard case .secondFactor(let stillThere) = afterWrong, stillThere.problem != nil else {
            throw ScenarioFailure(action: "the computer is refused", outcome: words(afterWrong))
        }
        account.log.record("the computer is refused", stillThere.problem?.message ?? "")
    }
}
