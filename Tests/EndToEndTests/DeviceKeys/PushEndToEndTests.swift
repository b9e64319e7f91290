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

    /// Apple's push service, spoken to a stand-in on loopback that checks what Apple checks:
    /// a request and a notice of a sign-in from a new device reach the phone's token; an expired
    /// provider token is renewed; a token Apple no longer knows is forgotten.
    @Test func requestsAndNoticesReachThePhoneThroughApple() async throws {
        guard let python = TestPython.find() else { return }
        let gone = String(repeating: "cd", count: 32)
        let apple = try FakeAPNs(python: python, gone: [gone], expireFirst: true)
        defer { apple.stop() }
        try await TestServers.withTarget(environment: apple.environment) { target in
            let rosa = try await PushOwner.make(target, "rosa")
            let token = Data(repeating: 0xAB, count: 32)
            try await rosa.phone.setPushToken(token)
            let hex = String(repeating: "ab", count: 32)

            // A request: announced over HTTP/2 with a provider token Apple accepts (renewed once
            // when Apple called the first one expired); the number is not in it.
            let computer = try await rosa.computer(target)
            let number = try await rosa.ask(computer)
            let shown = try await rosa.shown()
            let requestID = shown.requestId
            let sent = try await apple.waitForReceived(2)
            #expect(sent.count == 2 && sent[0].status == 403 && sent[0].reason == "ExpiredProviderToken")
            let announced = try #require(sent.last)
            #expect(announced.status == 200 && announced.token == hex, "\(announced)")
            #expect(announced.headers["apns-topic"] == apple.topic && announced.headers["apns-push-type"] == "alert")
            #expect(announced.headers["apns-collapse-id"] == requestID)
            #expect(announced.payload?.twofold == ["kind": "approval", "requestId": requestID])
            #expect(announced.payload?.aps.category == "TWOFOLD_APPROVAL")
            #expect(announced.payload?.aps.alert.body.contains("this computer") == true)
            let words = [announced.payload?.aps.alert.title, announced.payload?.aps.alert.body].compactMap { $0 }
            #expect(
                !words.joined(separator: " ").split { !$0.isNumber }.contains(Substring(String(number))),
                "the number stays on the screen: \(words)")

            #expect(try await rosa.phone.answer(shown, .deny).status == .denied)

            // A sign-in from a browser the account has not used: a notice, on the long poll and
            // through Apple.
            let browser = APIClient(
                baseURL: target.server.baseURL,
                headers: ["User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"])
            let elsewhere = SignInFlow(
                client: browser, session: SessionManager(client: browser, store: MemoryTokenStore()))
            guard case .secondFactor = await elsewhere.signIn("rosa", password: TestAccounts.password) else {
                Issue.record("no second step")
                return
            }
            _ = await elsewhere.choose(.totp)
            let next = try TOTP(secret: rosa.secret).code(at: Date().addingTimeInterval(30))
            guard case .signedIn = await elsewhere.submit(code: next) else {
                Issue.record("not signed in: \(await elsewhere.state)")
                return
            }
            var notices: [PhoneNoticeDTO] = []
            let deadline = Date().addingTimeInterval(15)
            while notices.isEmpty, Date() < deadline {
                notices = try await rosa.phone.check(wait: 5, after: nil).notices
            }
            let notice = try #require(notices.first)
            #expect(notice.title == "New sign-in to your account" && notice.body.contains("Firefox on Linux"))
            #expect(notices.count == 1, "the phone's own and the SDK's sign-ins are known: \(notices)")
            let noticed = try await poll(seconds: 15, { try apple.received() }) {
                $0.contains { $0.payload?.twofold["kind"] == "notice" }
            }
            #expect(
                noticed.contains {
                    $0.payload?.twofold == ["kind": "notice", "noticeId": notice.id] && $0.status == 200
                })
            // A notice the phone has does not end its wait.
            let started = Date()
            let again = try await rosa.phone.check(wait: 2, after: notice.id)
            #expect(Date().timeIntervalSince(started) >= 1.5 && again.notices.first?.id == notice.id)

            // A token Apple no longer knows: answered 410 once, then forgotten.
            try await rosa.phone.setPushToken(Data(repeating: 0xCD, count: 32))
            let before = try apple.received().count
            _ = try await rosa.ask(computer)
            let refused = try await apple.waitForReceived(before + 1)
            #expect(refused.last?.status == 410 && refused.last?.token == gone)
            // The next request goes to no one (the phone's token is forgotten); once the phone
            // gives its address again, the one after reaches it (announcements go out in order).
            _ = try await rosa.ask(computer)
            try await rosa.phone.setPushToken(token)
            _ = try await rosa.ask(computer)
            let after = try await apple.waitForReceived(before + 2)
            #expect(after.count == before + 2 && after.last?.token == hex, "the forgotten token is not used again")
        }
    }

    /// A signed-in computer steps up by approving on the phone (`PhoneStepUp`): the right
    /// number gives the proof `POST /auth/step-up` takes; a wrong one is refused in words.
    @Test func aStepUpApprovedOnThePhone() async throws {
        try await TestServers.withTarget { target in
            let tess = try await PushOwner.make(target, "tess")
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            let computer = SignInFlow(client: target.client, session: session)
            _ = await computer.signIn("tess", password: TestAccounts.password)
            _ = await computer.choose(.totp)
            let code = try TOTP(secret: tess.secret).code(at: Date().addingTimeInterval(30))
            guard case .signedIn = await computer.submit(code: code) else {
                Issue.record("not signed in: \(await computer.state)")
                return
            }
            let stepUp = PhoneStepUp(session: session)
            let started = try await stepUp.ask()
            let waiting = Task { try await stepUp.proof(for: started) }
            let shown = try await tess.shown()
            #expect(shown.requestId == started.requestId)
            #expect(try await tess.phone.answer(shown, .approve, number: started.number).status == .approved)
            let proof = try await waiting.value
            let stepped = try await target.client.send(API.Auth.stepUp, proof, bearer: try await session.accessToken())
            #expect(!stepped.accessToken.token.isEmpty)

            let wrong = try await stepUp.ask()
            let refused = Task { try await stepUp.proof(for: wrong) }
            let other = try await tess.shown()
            _ = try await tess.phone.answer(other, .approve, number: other.choices.first { $0 != wrong.number })
            let refusal = await #expect(throws: PhoneStepUpRefused.self) { try await refused.value }
            #expect(refusal?.status == .wrongNumber && refusal?.message.contains("not the one shown") == true)
            // As an app's alert says it: the server's words, not "offline".
            #expect(refusal.map { SignInProblem.of($0).message.contains("not the one shown") } == true)
        }
    }
}
