import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import VaporTesting

@testable import TwofoldServer

/// "Approve on your phone" (issue Z) through the typed client: the number, the signature, the
/// single use, and the rules against prompt bombing, tried as a stranger with the password would.
@Suite(.tags(.database)) struct PushApprovalTests {
    /// Alice with a phone holding a device key, and a password sign-in waiting for its second step.
    struct Scene {
        let app: Application
        let phone: SoftwareDeviceKey
        let token: String
        let client: APIClient

        static func make(_ app: Application) async throws -> Scene {
            let tokens = try await Accounts.signUp(app)
            let phone = SoftwareDeviceKey()
            let client = app.client()
            try await DeviceKeySteps.enrollKey(
                app, "alice", token: tokens.accessToken.token, phone: phone, device: "iphone-1")
            return Scene(app: app, phone: phone, token: tokens.accessToken.token, client: client)
        }

        /// The computer the password is typed on (a stranger's, or the owner's).
        var computer: APIClient {
            var client = app.client(from: "203.0.113.7")
            client.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36"
            return client
        }

        /// The password typed there: the login flow.
        func password() async throws -> LoginChallengeResponse {
            let outcome = try await computer.send(
                API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            guard case .secondStep(let challenge) = outcome else { throw ExpectedSecondStep() }
            return challenge
        }

        func start(_ flow: LoginChallengeResponse) async throws -> PushStartResponse {
            try await computer.send(API.Push.start, PushStartRequest(otpFlowId: flow.otpFlowId))
        }

        func listed(wait: Int = 0) async throws -> [PushApprovalDTO] {
            try await client.send(
                API.Push.pending, "iphone-1", bearer: token, query: PushWaitQuery(wait: wait).items
            ).approvals
        }

        /// The phone's answer, signed by `key` (the phone's own unless said).
        func decision(
            _ request: PushApprovalDTO, _ decision: PushApprovalMessage.Decision, number: Int? = nil,
            key: SoftwareDeviceKey? = nil
        ) throws -> PushDecisionRequest {
            try PushSteps.decision(request, decision, number: number, key: key ?? phone)
        }

        func decide(_ body: PushDecisionRequest) async throws -> PushDecisionResponse {
            try await client.send(API.Push.decide, "iphone-1", body, bearer: token)
        }

        func status(_ flow: LoginChallengeResponse, _ started: PushStartResponse, wait: Int = 0) async throws
            -> PushStatusResponse
        {
            try await client.send(
                API.Push.status, PushStatusRequest(otpFlowId: flow.otpFlowId, requestId: started.requestId, wait: wait))
        }

        func complete(_ flow: LoginChallengeResponse, _ started: PushStartResponse) async throws -> SecondStepResponse {
            try await client.send(
                API.Push.complete, PushCompleteRequest(otpFlowId: flow.otpFlowId, requestId: started.requestId))
        }
    }

    struct ExpectedSecondStep: Error {}

    @Test func theRightNumberSignsInOnce() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            #expect(flow.availableMethods.prefix(2) == [.deviceKey, .push])
            let started = try await scene.start(flow)
            #expect((10...99).contains(started.number))
            #expect(started.asking == "Chrome on Linux" && started.place == "network 203.0.113.x")
            let shown = try #require(try await scene.listed().first)
            #expect(shown.choices.count == 3 && shown.choices.contains(started.number))
            #expect(Set(shown.choices).count == 3 && shown.asking == started.asking)
            let approval = try scene.decision(shown, .approve, number: started.number)
            #expect(try await scene.decide(approval).status == .approved)
            #expect(try await scene.status(flow, started).status == .approved)
            let signedIn = try await scene.complete(flow, started)
            #expect(signedIn.user.username == "alice")
            let claims = try #require(
                await app.twofold.tokens.verify(signedIn.accessToken.token, now: app.twofold.clock.now()))
            #expect(claims.amr.contains("hwk") && claims.amr.contains("mfa"))
            // The same signed answer again, and the same approval again, do nothing.
            await #expect(throws: APIError.self) { try await scene.decide(approval) }
            let replayed = await #expect(throws: APIError.self) { try await scene.complete(flow, started) }
            #expect(replayed?.status == 409)
            #expect(try await AuditQueries.count(type: "push.approved", on: app) == 1)
        }
    }

    @Test func aWrongNumberIsRefusedAndCounted() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            let wrong = try #require(shown.choices.first { $0 != started.number })
            #expect(try await scene.decide(try scene.decision(shown, .approve, number: wrong)).status == .wrongNumber)
            #expect(try await scene.status(flow, started).status == .wrongNumber)
            let refused = await #expect(throws: APIError.self) { try await scene.complete(flow, started) }
            #expect(refused?.status == 401)
            #expect(try await AuditQueries.count(type: "push.wrong_number", on: app) == 1)
            #expect(
                try await app.twofold.push.store.decisions(userID: userID(app), limit: 3).first?.status == .wrongNumber)
            // Whoever tapped did not see the screen that asked: push is off for the hour at once.
            let next = try await scene.password()
            #expect(!next.availableMethods.contains(.push) && next.availableMethods.contains(.deviceKey))
            #expect(try await AuditQueries.count(type: "push.paused", on: app) == 1)
        }
    }

    @Test func aRequestNobodyAnswersExpiresAndCannotBeAnsweredAfter() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            #expect(started.expiresAt == clock.now.addingTimeInterval(app.twofold.rules.pushLifetime))
            let shown = try #require(try await scene.listed().first)
            clock.advance(by: app.twofold.rules.pushLifetime + 1)
            #expect(try await scene.status(flow, started).status == .expired)
            #expect(try await scene.listed().isEmpty, "the phone no longer shows it")
            let late = await #expect(throws: APIError.self) {
                try await scene.decide(try scene.decision(shown, .approve, number: started.number))
            }
            #expect(late?.status == 409 && late?.code == .expired)
            let refused = await #expect(throws: APIError.self) { try await scene.complete(flow, started) }
            #expect(refused?.status == 401)
        }
    }

    @Test func anApprovalSignsInOnlyWhileTheDeviceHasTheKeyThatSignedIt() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            #expect(
                try await scene.decide(try scene.decision(shown, .approve, number: started.number)).status == .approved)
            // The device is given another key before the sign-in completes.
            let device = try #require(try await app.twofold.deviceKeys.devices(userID: userID(app)).first)
            try await app.twofold.deviceKeys.store.changeKey(
                deviceRowID: device.id, method: .secureEnclave, publicKey: SoftwareDeviceKey().publicKey,
                deviceModel: nil, enrolledAt: nil, pinHash: nil, now: app.twofold.clock.now(), addedBy: nil)
            let refused = await #expect(throws: APIError.self) { try await scene.complete(flow, started) }
            #expect(refused?.status == 404)
        }
    }

    @Test func thisWasntMeEndsTheSignInEvenWhileASecondStepHoldsIt() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            _ = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            // A second step (a stranger's, racing) has claimed the flow when the owner reports it,
            // and gives it back after: the flow stays over.
            let record = try await app.twofold.loginFlows.active(flow.otpFlowId)
            let claimedAt = app.twofold.clock.now()
            #expect(try await app.twofold.loginFlows.store.consume(flowID: record.id, now: claimedAt))
            #expect(try await scene.decide(try scene.decision(shown, .notMe)).status == .reported)
            try await app.twofold.loginFlows.store.release(flowID: record.id, claimedAt: claimedAt)
            let over = await #expect(throws: APIError.self) { try await scene.start(flow) }
            #expect(over?.status == 401 || over?.status == 409, "\(String(describing: over))")
        }
    }

    @Test func aSignatureOverOtherWordsOrByAnotherKeyChangesNothing() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            // Another key; the phone's key over another number than the body says; a request
            // shown with another place than the server stored.
            var forged = try scene.decision(shown, .approve, number: started.number, key: SoftwareDeviceKey())
            var refused = await #expect(throws: APIError.self) { try await scene.decide(forged) }
            #expect(refused?.code == .signatureInvalid)
            forged = try scene.decision(shown, .approve, number: shown.choices.first { $0 != started.number })
            forged.number = started.number
            refused = await #expect(throws: APIError.self) { try await scene.decide(forged) }
            #expect(refused?.code == .signatureInvalid)
            var elsewhere = shown
            elsewhere.place = "this computer"
            refused = await #expect(throws: APIError.self) {
                try await scene.decide(try scene.decision(elsewhere, .approve, number: started.number))
            }
            #expect(refused?.code == .signatureInvalid)
            #expect(try await scene.status(flow, started).status == .pending)
            #expect(
                try await scene.decide(try scene.decision(shown, .approve, number: started.number)).status == .approved)
        }
    }

    @Test func denyRefusesAndThisWasntMeEndsTheSignInAndTellsTheOwner() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let scene = try await Scene.make(app)
            var flow = try await scene.password()
            var started = try await scene.start(flow)
            var shown = try #require(try await scene.listed().first)
            #expect(try await scene.decide(try scene.decision(shown, .deny)).status == .denied)
            #expect(try await scene.status(flow, started).status == .denied)
            // Denied, the flow goes on: another way (here another request) is still open.
            flow = try await scene.password()
            started = try await scene.start(flow)
            shown = try #require(try await scene.listed().first)
            _ = try await Codes.deliverAll(app, clock: clock)
            #expect(try await scene.decide(try scene.decision(shown, .notMe)).status == .reported)
            #expect(try await scene.status(flow, started).status == .reported)
            // The sign-in is over: no other method completes it.
            let over = await #expect(throws: APIError.self) { try await scene.start(flow) }
            #expect(over?.code == .alreadyUsed)
            let notices = try await Codes.deliverAll(app, clock: clock)
            #expect(notices.contains { $0.destination == "alice@example.com" && $0.body.contains("change it now") })
            let events = try await app.twofold.audit.events(type: "push.reported")
            #expect(events.count == 1 && events.first?.ipAddress == "203.0.113.7")
        }
    }

    @Test func threeRefusalsInARowTurnPushOffForAnHourAndTellTheOwner() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let scene = try await Scene.make(app)
            for _ in 0..<3 {
                let flow = try await scene.password()
                #expect(flow.availableMethods.contains(.push))
                _ = try await scene.start(flow)
                let shown = try #require(try await scene.listed().first)
                _ = try await scene.decide(try scene.decision(shown, .deny))
            }
            let flow = try await scene.password()
            #expect(!flow.availableMethods.contains(.push) && flow.availableMethods.contains(.deviceKey))
            let paused = await #expect(throws: APIError.self) { try await scene.start(flow) }
            #expect(paused?.status == 429)
            let notices = try await Codes.deliverAll(app, clock: clock)
            #expect(notices.filter { $0.subject == "Approve on your phone is off for now" }.count == 1)
            #expect(try await AuditQueries.count(type: "push.paused", on: app) == 1)
            clock.advance(by: 3601)
            #expect(try await scene.password().availableMethods.contains(.push))
        }
    }

    @Test func aStrangerWithThePasswordSpendsOnlyTheBudgetAndOneRequestWaitsAtATime() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            var started: [PushStartResponse] = []
            for _ in 0..<5 { started.append(try await scene.start(flow)) }
            // Each new request replaced the one before: the phone sees one.
            #expect(try await scene.listed().map(\.requestId) == [started[4].requestId])
            #expect(try await scene.status(flow, started[0]).status == .replaced)
            let spent = await #expect(throws: APIError.self) { try await scene.start(flow) }
            #expect(spent?.status == 429)
            #expect(try await scene.listed().map(\.requestId) == [started[4].requestId], "still waiting")
            // The owner is told, once however often the stranger asks again.
            _ = await #expect(throws: APIError.self) { try await scene.start(flow) }
            let told = try await Codes.deliverAll(app, clock: clock)
            #expect(told.filter { $0.subject == "Your phone was asked too often" }.count == 1, "\(told.map(\.subject))")
            #expect(try await AuditQueries.count(type: "push.budget_spent", on: app) == 1)
            let next = try await scene.password()
            #expect(!next.availableMethods.contains(.push) && next.availableMethods.contains(.deviceKey))
            clock.advance(by: 3601)
            #expect(try await scene.password().availableMethods.contains(.push))
        }
    }

    @Test func parallelAnswersDecideOnceAndParallelCompletionsSignInOnce() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            let approval = try scene.decision(shown, .approve, number: started.number)
            let decided = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { (try? await scene.decide(approval)) == nil ? 0 : 1 } }
                return await group.reduce(0, +)
            }
            #expect(decided == 1)
            let signedIn = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { (try? await scene.complete(flow, started)) == nil ? 0 : 1 } }
                return await group.reduce(0, +)
            }
            #expect(signedIn == 1)
        }
    }

    @Test func theWaitingSideLearnsOfTheAnswerWithoutPolling() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            // The phone waits for a request before there is one; the request wakes it.
            async let phoneSees = scene.listed(wait: 25)
            try await Task.sleep(for: .milliseconds(200))
            let started = try await scene.start(flow)
            let began = Date()
            let shown = try #require(try await phoneSees.first)
            async let outcome = scene.status(flow, started, wait: 25)
            try await Task.sleep(for: .milliseconds(200))
            _ = try await scene.decide(try scene.decision(shown, .approve, number: started.number))
            #expect(try await outcome.status == .approved)
            // Woken, both: a wait that ran its course would take 25 s (a loaded machine has taken
            // 13 s for the woken path, so the bound is the wait's, not a speed).
            #expect(Date().timeIntervalSince(began) < 20)
        }
    }

    @Test func beyondEightWaitersOnOneRequestTheRestAreAnsweredAtOnce() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            let began = Date()
            async let answers = withTaskGroup(of: (PushStatus?, TimeInterval).self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        let status = try? await scene.status(flow, started, wait: 20).status
                        return (status, Date().timeIntervalSince(began))
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            try await Task.sleep(for: .seconds(1))
            _ = try await scene.decide(try scene.decision(shown, .approve, number: started.number))
            let all = await answers
            #expect(all.filter { $0.0 == .pending }.count == 4, "\(all)")
            #expect(all.filter { $0.0 == .approved }.count == 8, "\(all)")
            #expect(all.allSatisfy { $0.1 < 10 }, "nobody waited the whole 20 s: \(all)")
        }
    }

    @Test func onlyTheOwnersPhoneWithAKeyAnswersAndBadInputIsAClearRefusal() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let flow = try await scene.password()
            let started = try await scene.start(flow)
            let shown = try #require(try await scene.listed().first)
            // Bob, signed in, with his own phone: alice's request is not his to see or answer.
            let bob = try await Accounts.signUp(app, "bob")
            let bobsPhone = SoftwareDeviceKey()
            _ = try await scene.client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "bob", publicKey: bobsPhone.publicKey, method: "secureEnclave", deviceId: "iphone-1"),
                bearer: bob.accessToken.token)
            let bobs = try await scene.client.send(API.Push.pending, "iphone-1", bearer: bob.accessToken.token)
            #expect(bobs.approvals.isEmpty)
            let answer = try scene.decision(shown, .approve, number: started.number, key: bobsPhone)
            let foreign = await #expect(throws: APIError.self) {
                try await scene.client.send(API.Push.decide, "iphone-1", answer, bearer: bob.accessToken.token)
            }
            #expect(foreign?.status == 404)
            for bad in [
                PushDecisionRequest(requestId: "nope", decision: "approve", number: 1, signature: "AAAA"),
                PushDecisionRequest(requestId: shown.requestId, decision: "maybe", number: 1, signature: "AAAA"),
                PushDecisionRequest(requestId: shown.requestId, decision: "approve", number: nil, signature: "AAAA"),
                PushDecisionRequest(requestId: shown.requestId, decision: "approve", number: 1, signature: "%%%"),
            ] {
                let refused = await #expect(throws: APIError.self) { try await scene.decide(bad) }
                #expect(refused?.status == 422, "\(bad)")
            }
            let badWait = await #expect(throws: APIError.self) {
                try await scene.client.send(
                    API.Push.pending, "iphone-1", bearer: scene.token, query: [URLQueryItem(name: "wait", value: "99")])
            }
            #expect(badWait?.status == 422)
            #expect(try await scene.status(flow, started).status == .pending)
        }
    }

    @Test func aPushTokenIsOnePhonesAndOnlyItsOwnerSetsIt() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            let alice = try await userID(app)
            let token = String(repeating: "A1", count: 32)
            _ = try await scene.client.send(
                API.Push.setPushToken, "iphone-1", PushTokenRequest(pushToken: token), bearer: scene.token)
            #expect(try await app.twofold.phones.store.tokens(userID: alice, limit: 10) == [token.lowercased()])
            // The phone is reinstalled and signed in to Bob's account: the token leaves Alice's.
            let bob = try await Accounts.signUp(app, "bob")
            _ = try await scene.client.send(
                API.DeviceKeys.enroll,
                DeviceEnrollRequest(
                    username: "bob", publicKey: SoftwareDeviceKey().publicKey, method: "secureEnclave",
                    deviceId: "bobs-phone"),
                bearer: bob.accessToken.token)
            _ = try await scene.client.send(
                API.Push.setPushToken, "bobs-phone", PushTokenRequest(pushToken: token), bearer: bob.accessToken.token)
            let bobID = try #require(try await app.twofold.users.named("bob")).id
            #expect(try await app.twofold.phones.store.tokens(userID: alice, limit: 10).isEmpty)
            #expect(try await app.twofold.phones.store.tokens(userID: bobID, limit: 10) == [token.lowercased()])
            // Alice cannot point Bob's phone, or a phone she does not have, anywhere.
            for device in ["bobs-phone", "nobodys-phone"] {
                let refused = await #expect(throws: APIError.self) {
                    try await scene.client.send(
                        API.Push.setPushToken, device, PushTokenRequest(pushToken: token), bearer: scene.token)
                }
                #expect(refused?.status == 404, "\(device)")
            }
            for bad in ["xyz", String(repeating: "ab", count: 31), String(repeating: "a", count: 201), "zz" + token] {
                let refused = await #expect(throws: APIError.self) {
                    try await scene.client.send(
                        API.Push.setPushToken, "bobs-phone", PushTokenRequest(pushToken: bad),
                        bearer: bob.accessToken.token)
                }
                #expect(refused?.status == 422 && refused?.problem?.errors?["pushToken"] != nil, "\(bad)")
            }
            #expect(try await app.twofold.phones.store.tokens(userID: bobID, limit: 10) == [token.lowercased()])
            _ = try await scene.client.send(API.Push.forgetPushToken, "bobs-phone", bearer: bob.accessToken.token)
            #expect(try await app.twofold.phones.store.tokens(userID: bobID, limit: 10).isEmpty)
        }
    }

    @Test func aSignInFromANewDeviceOrNetworkTellsThePhonesOnce() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let scene = try await Scene.make(app)
            // The computer at 203.0.113.7 with Chrome signs in (approved on the phone), twice.
            for _ in 0..<2 {
                clock.advance(by: 2)
                let flow = try await scene.password()
                let started = try await scene.start(flow)
                let shown = try #require(try await scene.listed().first)
                _ = try await scene.decide(try scene.decision(shown, .approve, number: started.number))
                _ = try await scene.computer.send(
                    API.Push.complete, PushCompleteRequest(otpFlowId: flow.otpFlowId, requestId: started.requestId))
            }
            clock.advance(by: 2)
            let phones = app.twofold.phones
            try await phones.watchSignIns()
            try await phones.watchSignIns()
            // Another instance, reading the same sign-ins from the start: still told once.
            let other = PhoneChannel(
                store: phones.store, deviceKeys: phones.deviceKeys, policy: phones.policy, waiters: phones.waiters,
                delivery: nil,
                work: phones.work, clock: phones.clock, logger: phones.logger)
            try await other.watchSignIns()
            let listed = try await scene.client.send(API.Push.pending, "iphone-1", bearer: scene.token)
            #expect(listed.notices.count == 1, "\(listed.notices)")
            let notice = try #require(listed.notices.first)
            #expect(notice.title == "New sign-in to your account")
            #expect(notice.body.contains("Chrome on Linux from network 203.0.113.x"), "\(notice.body)")
            let badAfter = await #expect(throws: APIError.self) {
                try await scene.client.send(
                    API.Push.pending, "iphone-1", bearer: scene.token, query: [URLQueryItem(name: "after", value: "1")])
            }
            #expect(badAfter?.status == 422)
            // A sign-in written after the watch read past its time (a slow write, a restart) is
            // still found: what the watch looked at is marked, not a time it read up to.
            var firefox = app.client(from: "198.51.100.9")
            firefox.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
            guard
                case .secondStep(let late) = try await firefox.send(
                    API.Auth.login, LoginRequest(username: "alice", password: Accounts.password))
            else { throw ExpectedSecondStep() }
            let asked = try await firefox.send(API.Push.start, PushStartRequest(otpFlowId: late.otpFlowId))
            _ = try await scene.decide(
                try scene.decision(try #require(try await scene.listed().first), .approve, number: asked.number))
            clock.advance(by: 5)
            try await phones.watchSignIns()
            // Its session is written as of 4 seconds before that reading.
            clock.advance(by: -4)
            _ = try await firefox.send(
                API.Push.complete, PushCompleteRequest(otpFlowId: late.otpFlowId, requestId: asked.requestId))
            clock.advance(by: 5)
            try await phones.watchSignIns()
            let both = try await scene.client.send(API.Push.pending, "iphone-1", bearer: scene.token).notices
            #expect(both.count == 2 && both.contains { $0.body.contains("Firefox on Linux") }, "\(both)")
            // A day later the notices are no longer shown.
            clock.advance(by: 24 * 3600 + 1)
            #expect(try await phones.notices(userID: try await userID(app)).isEmpty)
        }
    }

    @Test func aStepUpApprovedOnThePhoneProvesTheKeyForThatSessionOnce() async throws {
        try await withTestApp { app in
            let scene = try await Scene.make(app)
            // The computer signs in (approved on the phone): a session of its own.
            let flow = try await scene.password()
            let signIn = try await scene.start(flow)
            _ = try await scene.decide(
                try scene.decision(try #require(try await scene.listed().first), .approve, number: signIn.number))
            let computer = try await scene.computer.send(
                API.Push.complete, PushCompleteRequest(otpFlowId: flow.otpFlowId, requestId: signIn.requestId)
            ).accessToken.token

            // It asks to step up; the phone approves with the number it shows.
            let started = try await scene.computer.send(API.Push.stepUpStart, bearer: computer)
            let shown = try #require(try await scene.listed().first)
            #expect(shown.requestId == started.requestId && shown.purpose == "stepUp")
            // Signed as a sign-in's approval, it is refused: the digest covers what it is for.
            var asSignIn = shown
            asSignIn.purpose = "signIn"
            let mislabelled = await #expect(throws: APIError.self) {
                try await scene.decide(try scene.decision(asSignIn, .approve, number: started.number))
            }
            #expect(mislabelled?.status == 401)
            _ = try await scene.decide(try scene.decision(shown, .approve, number: started.number))
            let status = try await scene.computer.send(
                API.Push.stepUpStatus, PushStepUpStatusRequest(requestId: started.requestId, wait: 0), bearer: computer)
            #expect(status.status == .approved)
            // Another session (the phone's own) cannot use it; nor can the used sign-in request
            // step anything up; the computer's session can, once.
            let proof = StepUpRequest(method: .push, requestId: started.requestId)
            for (body, bearer) in [
                (proof, scene.token), (StepUpRequest(method: .push, requestId: signIn.requestId), computer),
            ] {
                let refused = await #expect(throws: APIError.self) {
                    try await scene.computer.send(API.Auth.stepUp, body, bearer: bearer)
                }
                #expect(refused?.status == 404, "\(body)")
            }
            let noID = await #expect(throws: APIError.self) {
                try await scene.computer.send(API.Auth.stepUp, StepUpRequest(method: .push), bearer: computer)
            }
            #expect(noID?.status == 422)
            let stepped = try await scene.computer.send(API.Auth.stepUp, proof, bearer: computer)
            let claims = try #require(
                await app.twofold.tokens.verify(stepped.accessToken.token, now: app.twofold.clock.now()))
            #expect(claims.amr.contains("hwk"))
            let again = await #expect(throws: APIError.self) {
                try await scene.computer.send(API.Auth.stepUp, proof, bearer: computer)
            }
            #expect(again?.status == 409)

            // "This wasn't me" on a step-up: that session is signed out and the owner told.
            let reported = try await scene.computer.send(API.Push.stepUpStart, bearer: computer)
            _ = try await scene.decide(try scene.decision(try #require(try await scene.listed().first), .notMe))
            #expect(reported.number > 0)
            let signedOut = await #expect(throws: APIError.self) {
                try await scene.computer.send(API.Auth.sessions, bearer: computer)
            }
            #expect(signedOut?.status == 401)
            #expect(try await scene.client.send(API.Auth.sessions, bearer: scene.token).sessions.count == 1)
        }
    }

    /// A computer kept signed in for months (its session used all along, started long ago) is
    /// known: a new session from it tells nobody; a browser never seen does, and so does one
    /// last seen more than 90 days ago.
    @Test func aComputerUsedForMonthsIsKnownAndANewBrowserIsNot() async throws {
        let clock = TestClock()
        try await withTestApp(clock: clock) { app in
            let alice = try await Accounts.signUp(app).user.id
            let phones = app.twofold.phones
            try await phones.watchSignIns()
            #expect(try await phones.notices(userID: alice).isEmpty, "the first sign-in tells nobody")
            let chrome = "Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36"
            let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
            let safari = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) Version/17.0 Safari/605.1.15"
            let store = app.twofold.sessions.store
            func session(_ agent: String, _ address: String, started: TimeInterval, used: TimeInterval) async throws {
                let record = SessionRecord(
                    id: UUID(), userID: alice, authTime: clock.now.addingTimeInterval(started), methods: ["pwd"],
                    createdAt: clock.now.addingTimeInterval(started), lastUsedAt: clock.now.addingTimeInterval(used),
                    ipAddress: address, userAgent: agent, proofs: [.password: clock.now])
                try await store.insert(
                    record,
                    firstRefreshToken: RefreshTokenRecord(
                        id: UUID(), sessionID: record.id, tokenHash: UUID().uuidString, createdAt: record.createdAt,
                        expiresAt: clock.now.addingTimeInterval(3600)))
            }
            let day: TimeInterval = 24 * 3600
            // Chrome at work, started 120 days ago and used yesterday; Safari, last used 100 days ago.
            try await session(chrome, "203.0.113.7", started: -120 * day, used: -day)
            try await session(safari, "198.51.100.4", started: -130 * day, used: -100 * day)
            // Now: Chrome from work again, Safari from its old network, and Firefox.
            try await session(chrome, "203.0.113.7", started: -2, used: -2)
            try await session(safari, "198.51.100.4", started: -2, used: -2)
            try await session(firefox, "192.0.2.50", started: -2, used: -2)
            try await phones.watchSignIns()
            let notices = try await phones.notices(userID: alice)
            #expect(notices.count == 2, "\(notices.map(\.body))")
            #expect(!notices.contains { $0.body.contains("Chrome") })
            #expect(notices.contains { $0.body.contains("Firefox") } && notices.contains { $0.body.contains("Safari") })
        }
    }

    private func userID(_ app: Application) async throws -> UUID {
        try #require(try await app.twofold.users.named("alice")).id
    }
}
