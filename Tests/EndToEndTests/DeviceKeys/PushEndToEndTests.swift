import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// "Approve on your phone" (issue Z) against the built server: a computer signs in with the
/// SDK's `SignInFlow` and waits; the virtual phone, signed in to the same account with its
/// device key enrolled, lists the request and answers it with `PhoneApprovals`.
@Suite struct PushEndToEndTests {
    @Test func approveDenyThisWasntMeAndAWrongNumber() async throws {
        try await TestServers.withMailTarget { target, sink in
            let pia = try await PushOwner.make(target, "pia")

            // Password → push → the phone picks the number the screen shows → signed in.
            let first = try await pia.computer(target)
            var number = try await pia.ask(first)
            let waiting = Task { await first.waitForPhone() }
            var shown = try await pia.shown()
            #expect(shown.choices.contains(number) && shown.place == "this computer")
            let approved = try await pia.phone.answer(shown, .approve, number: number)
            #expect(approved.status == .approved)
            #expect(await pia.virtualPhone.prompts.last == .biometric, "the approval took Face ID")
            guard case .signedIn(let user) = await waiting.value else {
                Issue.record("not signed in: \(await first.state)")
                return
            }
            #expect(user.username == "pia")
            // The same request answered again: 409.
            let replayed = await #expect(throws: APIError.self) {
                _ = try await pia.phone.answer(shown, .approve, number: number)
            }
            #expect(replayed?.status == 409)

            // Deny: refused, in words, and the sign-in may go on another way.
            let computer = try await pia.computer(target)
            number = try await pia.ask(computer)
            shown = try await pia.shown()
            #expect(try await pia.phone.answer(shown, .deny).status == .denied)
            guard case .secondFactor(let denied) = await computer.waitForPhone() else {
                Issue.record("not refused: \(await computer.state)")
                return
            }
            #expect(denied.problem?.message.contains("denied") == true)

            // "This wasn't me": the sign-in is over and the owner is told.
            _ = try await pia.ask(computer)
            shown = try await pia.shown()
            #expect(try await pia.phone.answer(shown, .notMe).status == .reported)
            guard case .credentials(let over) = await computer.waitForPhone() else {
                Issue.record("the sign-in went on: \(await computer.state)")
                return
            }
            #expect(over?.message.contains("not yours") == true)

            // A wrong number on another sign-in: refused, and push is off for the hour at once
            // (whoever tapped did not see the screen that asked); the owner is told.
            let another = try await pia.computer(target)
            number = try await pia.ask(another)
            shown = try await pia.shown()
            #expect(
                try await pia.phone.answer(shown, .approve, number: shown.choices.first { $0 != number }).status
                    == .wrongNumber)
            guard case .secondFactor(let refused) = await another.waitForPhone() else {
                Issue.record("not refused: \(await another.state)")
                return
            }
            #expect(
                refused.problem?.message.contains("not the one shown") == true, "\(String(describing: refused.problem))"
            )
            let mail = try await poll({ try sink.messages().filter { $0.recipients == ["pia@example.com"] } }) {
                $0.map(TestServers.text(of:)).contains { $0.contains("stopped asking it") }
            }
            let texts = mail.map(TestServers.text(of:))
            #expect(texts.contains { $0.contains("change it now") && $0.contains("this computer") })
            #expect(texts.contains { $0.contains("stopped asking it") })
            let later = SignInFlow(
                client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()))
            guard case .secondFactor(let offered) = await later.signIn("pia", password: TestAccounts.password) else {
                Issue.record("no second step")
                return
            }
            #expect(!offered.methods.contains(.push) && offered.methods.contains(.totp))
        }
    }

    @Test func aStrangerWithThePasswordSpendsTheBudgetAndTheOwnerStillSignsInWithACode() async throws {
        try await TestServers.withTarget { target in
            let quinn = try await PushOwner.make(target, "quinn")
            // The stranger asks again and again; the phone ignores them.
            let stranger = try await quinn.computer(target)
            for _ in 0..<5 { _ = try await quinn.ask(stranger) }
            guard case .secondFactor(let spent) = await stranger.askPhone() else {
                Issue.record("no step")
                return
            }
            #expect(spent.approval == nil && spent.problem != nil)
            #expect(try await quinn.phone.waiting().count == 1, "one request waits at a time")
            // Push is no longer offered; the owner signs in with the authenticator app.
            let owner = SignInFlow(
                client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()))
            guard case .secondFactor(let step) = await owner.signIn("quinn", password: TestAccounts.password) else {
                Issue.record("no second step")
                return
            }
            #expect(!step.methods.contains(.push) && step.methods.contains(.totp))
            _ = await owner.choose(.totp)
            let code = try TOTP(secret: quinn.secret).code(at: Date().addingTimeInterval(30))
            guard case .signedIn = await owner.submit(code: code) else {
                Issue.record("the owner could not sign in with a code: \(await owner.state)")
                return
            }
        }
    }
}
