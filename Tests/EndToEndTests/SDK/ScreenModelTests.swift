import Foundation
import Synchronization
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldScreens
import TwofoldTestSupport
import TwofoldTestingScreens

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's screen models against the built server: for each screen, success, a wrong code, the
/// lockout, the network gone and a cancelled prompt, where the screen can meet them. The views
/// (Apple-only) render only what these models hold.
@MainActor @Suite(.serialized) struct ScreenModelTests {
    /// A client for a port nothing listens on: the network gone.
    static var unreachable: APIClient { APIClient(baseURL: URL(string: "http://127.0.0.1:\(SMTPSink.freePort())")!) }

    /// Answers `prompt` with `answer` whenever it asks, while `body` runs.
    /// Answers step-ups as a person with the phone would: a removal with the password and then a
    /// fresh SMS code, anything else with an SMS code (or the password when no code is offered).
    static func answerWithSMS(_ gateway: SMSGateway) -> @MainActor (StepUpPrompt) async -> Void {
        let gavePassword = Flag()
        return { prompt in
            guard let question = prompt.question else { return }
            let offered = question.methods
            if question.need == "otherProof", !gavePassword.value {
                gavePassword.value = true
                prompt.choose(.password)
                prompt.password = TestAccounts.password
            } else if offered.contains(.sms) {
                prompt.choose(.sms)
                let before = (try? gateway.messages().count) ?? 0
                await prompt.sendCode()
                let code = try? await gateway.nextMessage(after: before)?.code
                prompt.code.update(code ?? "")
            } else {
                prompt.choose(.password)
                prompt.password = TestAccounts.password
            }
            prompt.confirm()
        }
    }

    static func answering(
        _ prompt: StepUpPrompt, with answer: @escaping @MainActor (StepUpPrompt) async -> Void,
        during body: () async throws -> Void
    ) async rethrows {
        let watcher = Task { @MainActor in
            while !Task.isCancelled {
                if prompt.question != nil { await answer(prompt) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        defer { watcher.cancel() }
        try await body()
    }

    /// Cancels, and records as an issue, a question of `prompt` nobody answers within 45
    /// seconds (a step-up the test did not expect), so a test fails instead of waiting forever.
    static func failUnexpectedQuestions(_ prompt: StepUpPrompt) -> Task<Void, Never> {
        Task { @MainActor in
            var since: Date?
            while !Task.isCancelled {
                if let question = prompt.question {
                    if let start = since, Date().timeIntervalSince(start) > 45 {
                        Issue.record("an unexpected step-up: \(question)")
                        prompt.cancel()
                        since = nil
                    } else if since == nil {
                        since = Date()
                    }
                } else {
                    since = nil
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    static func code(_ secret: [UInt8], offset: TimeInterval = 0) throws -> String {
        try TOTP(secret: secret).code(at: Date().addingTimeInterval(offset))
    }

    // MARK: Seeds 003 and 002: sign-in, challenge, verify code

    @Test(.timeLimit(.minutes(2))) func signInScreenThroughEveryOutcome() async throws {
        try await TestServers.withTarget { target in
            let (secret, backupCodes) = try await SDKAccounts.accountWithTOTP(target.client, "sam")
            @MainActor func model() -> SignInModel {
                SignInModel(
                    flow: SignInFlow(
                        client: target.client,
                        session: SessionManager(client: target.client, store: MemoryTokenStore()),
                        rememberedDevices: MemoryRememberedDevices()))
            }

            // A wrong password: the credentials again, in words, with an error haptic.
            let screen = model()
            screen.name = "sam"
            screen.password = "not the password at all"
            await screen.signIn()
            #expect(screen.phase == .credentials && screen.problem == .invalidCredentials)
            #expect(screen.message == "The account name or password is wrong." && screen.feedback?.kind == .error)

            // The password: the challenge with the account's tabs, the authenticator first.
            screen.password = TestAccounts.password
            await screen.signIn()
            #expect(screen.phase == .challenge && screen.method == .totp)
            #expect(screen.tabs == [.totp, .backup], "\(screen.tabs)")
            #expect(screen.canRememberDevice && screen.resendCountdown() == nil)

            // A wrong code pasted inside a message: submitted at once, refused, attempts left shown.
            let wrong = try SDKAccounts.wrongCode(secret)
            await screen.paste("Your code is \(wrong).")
            #expect(screen.problem == .wrongCode(attemptsRemaining: 4), "\(String(describing: screen.problem))")
            #expect(screen.step?.attemptsRemaining == 4 && screen.code.text.isEmpty && screen.phase == .challenge)

            // The backup tab takes eight letters and digits; a right backup code signs in.
            await screen.select(.backup)
            #expect(screen.method == .backup && screen.code.length == 8 && screen.code.allowsLetters)
            await screen.type(backupCodes[0].lowercased())
            guard case .signedIn(let user) = screen.phase else {
                Issue.record("a backup code did not sign in: \(screen.phase) \(String(describing: screen.problem))")
                return
            }
            #expect(user.username == "sam" && screen.password.isEmpty && screen.feedback?.kind == .success)

            // Wrong codes lock the method: the lock and its countdown are on the step.
            let locking = model()
            locking.name = "sam"
            locking.password = TestAccounts.password
            await locking.signIn()
            for _ in 0..<6 where locking.lockCountdown() == nil {
                await locking.type(wrong)
            }
            guard case .locked(let until) = locking.problem else {
                Issue.record("no lockout: \(String(describing: locking.problem))")
                return
            }
            #expect((until ?? .distantPast) > Date() && (locking.lockCountdown() ?? 0) > 0)
            // While locked, the right code is not even sent.
            await locking.type(try Self.code(secret))
            #expect(locking.phase == .challenge)

            // "Try another way" walks the chain to recovery.
            await locking.tryAnotherWay()
            #expect(locking.method == .backup)
            await locking.tryAnotherWay()
            #expect(locking.phase == .recovery)

            // The network gone: said so, on the credentials.
            let offline = SignInModel(
                flow: SignInFlow(
                    client: Self.unreachable,
                    session: SessionManager(client: Self.unreachable, store: MemoryTokenStore())))
            offline.name = "sam"
            offline.password = TestAccounts.password
            await offline.signIn()
            #expect(offline.problem == .offline && offline.phase == .credentials)
        }
    }

    /// Seed 000's error states: rate limited → a countdown, inputs disabled until the time the
    /// server gave; account locked → the full-screen lockout with its words.
    @Test(.timeLimit(.minutes(2))) func aThrottleDisablesTheInputsAndALockedAccountFillsTheScreen() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("tia")
            let screen = SignInModel(
                flow: SignInFlow(
                    client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore())))
            screen.name = "tia"
            screen.password = "not the password"
            // Five tries at once per account and address (TWOFOLD_THROTTLE_LOGIN_PER_ACCOUNT_AND_ADDRESS).
            for _ in 0..<8 where screen.waitCountdown() == nil {
                await screen.signIn()
            }
            guard case .rateLimited(let seconds?) = screen.problem else {
                Issue.record("no throttle: \(String(describing: screen.problem))")
                return
            }
            #expect(seconds > 0 && (screen.waitCountdown() ?? 0) > 0 && (screen.waitCountdown() ?? 0) <= seconds)
            screen.password = TestAccounts.password
            #expect(!screen.canSignIn, "the button waits for the server's time")
            await screen.signIn()
            #expect(screen.phase == .credentials && screen.problem == .rateLimited(retryAfter: seconds), "nothing sent")
            #expect(!screen.isLockedOut && screen.lockoutMessage() == nil, "a throttle is not a lockout")
        }

        // The account locked (20 lockouts in a day, or an administrator): the whole screen says so.
        let locked = APIClient(
            baseURL: URL(string: "https://mfa.example.com")!,
            transport: Answering(
                status: 403,
                body: #"{"type":"https://twofold.dev/problems/account_locked","title":"Account locked","status":403,"#
                    + #""code":"account_locked","detail":"This account is locked."}"#))
        let lockedOut = SignInModel(
            flow: SignInFlow(client: locked, session: SessionManager(client: locked, store: MemoryTokenStore())))
        lockedOut.name = "tia"
        lockedOut.password = TestAccounts.password
        await lockedOut.signIn()
        #expect(lockedOut.problem == .locked(until: nil) && lockedOut.isLockedOut)
        #expect(lockedOut.lockoutMessage()?.hasPrefix("This account is locked to keep it safe.") == true)
        #expect(lockedOut.canSignIn, "no time was given: trying again is allowed")

        // Locked for a time: the countdown, as a clock reads.
        let until = Date().addingTimeInterval(14 * 60 + 32)
        let timed = APIClient(
            baseURL: URL(string: "https://mfa.example.com")!,
            transport: Answering(
                status: 423,
                body: #"{"type":"https://twofold.dev/problems/locked","title":"Locked","status":423,"code":"locked","#
                    + #""lockoutUntil":"\#(ISO8601DateFormatter().string(from: until))"}"#))
        let clock = Date()
        let waiting = SignInModel(
            flow: SignInFlow(client: timed, session: SessionManager(client: timed, store: MemoryTokenStore())),
            clock: { clock })
        waiting.name = "tia"
        waiting.password = TestAccounts.password
        await waiting.signIn()
        #expect(waiting.isLockedOut && !waiting.canSignIn)
        let message = try #require(waiting.lockoutMessage())
        #expect(message.hasSuffix("Try again in 14:32.") || message.hasSuffix("Try again in 14:31."), "\(message)")
    }

    /// Seed 000's QR scanner: codes that are not the app's are refused in words and scanning goes
    /// on; the first one that is ends it with its link; no camera leaves "Enter manually".
    @Test func theScannerTakesTheFirstCodeTheAppOpens() async throws {
        struct ListScanner: CodeScanning {
            let available: Bool
            let seen: [String]
            var isAvailable: Bool { get async { available } }
            func codes() -> AsyncStream<String> {
                AsyncStream { continuation in
                    for code in seen { continuation.yield(code) }
                    continuation.finish()
                }
            }
        }
        let server = URL(string: "https://mfa.example.com")
        let camera = ListScanner(
            available: true,
            seen: [
                "https://shop.example.com/", "https://mfa.example.com/recovery/pass?token=abc123",
                "twofold://settings/2fa",
            ])
        let scanner = CodeScannerModel(scanner: camera, server: server)
        await scanner.scan()
        #expect(
            scanner.phase == .found(.recovery(token: "abc123")) && scanner.problem == nil, "the first the app opens")

        let nothing = CodeScannerModel(scanner: ListScanner(available: true, seen: ["WIFI:S:cafe;;"]), server: server)
        await nothing.scan()
        #expect(nothing.phase == .scanning && nothing.problem?.hasPrefix("Twofold can't use this code.") == true)

        let noCamera = CodeScannerModel(scanner: ListScanner(available: false, seen: []), server: server)
        await noCamera.scan()
        #expect(noCamera.phase == .unavailable)
        noCamera.enterManually()
        noCamera.typed = "not a link"
        noCamera.submitTyped()
        #expect(noCamera.phase == .manual && noCamera.problem != nil)
        noCamera.typed = "  otpauth://totp/Acme:pat@example.com?secret=JBSWY3DPEHPK3PXP\n"
        noCamera.submitTyped()
        guard case .found(.authenticator(let uri)) = noCamera.phase else {
            Issue.record("typed text not taken: \(noCamera.phase)")
            return
        }
        #expect(uri.account == "pat@example.com" && noCamera.problem == nil)

        // The app takes the link read as it takes one opened: the recovery link waits for sign-in.
        let app = AppModel(session: ScreenFixtures.session())
        await app.launch()
        app.open(DeepLink.recovery(token: "abc123"))
        #expect(app.linkToShow == .recovery(token: "abc123"))
    }

    /// Seed 000's edge case: a phone that looks jailbroken gets a warning and may go on.
    @Test func aPhoneThatLooksJailbrokenIsWarnedAndMayGoOn() async {
        struct Fixed: DeviceIntegrityCheck {
            let compromised: Bool
            func looksCompromised() async -> Bool { compromised }
        }
        let app = AppModel(session: ScreenFixtures.session())
        await app.checkIntegrity(Fixed(compromised: false))
        #expect(app.integrityWarning == nil)
        await app.checkIntegrity(Fixed(compromised: true))
        #expect(app.integrityWarning?.hasPrefix("This iPhone looks jailbroken.") == true)
        await app.launch()
        #expect(app.screen == .signIn, "a warning, not a block")
        app.integrityWarningSeen()
        #expect(app.integrityWarning == nil)
    }

    /// A server that answers every request with one problem document.
    struct Answering: Transport {
        let status: Int
        let body: String
        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            HTTPAnswer(status: status, headers: ["Content-Type": Problem.mediaType], body: Data(body.utf8))
        }
    }

    // MARK: Fixtures for previews

    /// The fixtures the SwiftUI previews show build with no server and show what they say.
    @Test func theFixturesForPreviews() async throws {
        #expect(ScreenFixtures.signIn().phase == .credentials)
        #expect(ScreenFixtures.backupCodes().codes.count == 10)
        let app = await ScreenFixtures.appOffline()
        #expect(app.isOffline && app.screen == .home(ScreenFixtures.user))
        #expect(ScreenFixtures.enrollment().phase == .checking)
        _ = (ScreenFixtures.securityHub(), ScreenFixtures.recovery(), ScreenFixtures.deviceSignIn())
        _ = ScreenFixtures.deviceSettings()
        // The phone of the fixtures signs nothing, and says so as a cancelled prompt.
        await #expect(throws: DeviceAuthFailure.userCancel) {
            try await ScreenFixtures.NoKeys().sign(Data(), tag: "any")
        }
    }

    // MARK: Seed 003's offline state

    /// The network, as a switch: off, every request fails as a phone without signal does.
    final class Network: Transport, @unchecked Sendable {
        // Safe: `up` is read and written under `lock`.
        private let lock = NSLock()
        private var up = true
        private let real = URLSessionTransport()
        func set(up: Bool) { lock.withLock { self.up = up } }
        func send(_ request: URLRequest) async throws -> HTTPAnswer {
            guard lock.withLock({ up }) else { throw URLError(.notConnectedToInternet) }
            return try await real.send(request)
        }
    }

    @Test(.timeLimit(.minutes(1))) func theOfflineStateWithItsRetry() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("oli")
            let network = Network()
            let client = APIClient(baseURL: target.client.baseURL, transport: network)
            let session = SessionManager(client: client, store: MemoryTokenStore())
            await session.signedIn(
                try await client.send(API.Auth.login, LoginRequest(username: "oli", password: TestAccounts.password))
                    .tokens)
            let queue = OfflineQueue(session: session, store: MemoryChangeQueueStore())
            let app = AppModel(session: session, queue: queue)
            await app.launch()
            #expect(await app.checkConnection() && !app.isOffline)

            // The signal goes: the app says so, and a change made meanwhile waits.
            network.set(up: false)
            _ = try await queue.enqueue(API.TwoFactor.totpSetup, NoContent())
            #expect(await app.checkConnection() == false)
            #expect(app.isOffline && app.waitingChanges == 1)
            _ = try await queue.enqueue(
                API.Passkeys.rename, "no-such-passkey", PasskeyRenameRequest(name: "Work laptop"))
            #expect(await app.checkConnection() == false)
            #expect(
                app.waiting.map(\.summary) == ["Start setting up an authenticator app", "Rename a passkey"],
                "what waits, one by one, oldest first")
            #expect(app.screen == .home(try #require(session.currentUser)), "offline is not signed out")

            // "Try again" with the signal back: online, and the change sent.
            network.set(up: true)
            #expect(await app.checkConnection())
            #expect(!app.isOffline && app.waitingChanges == 0 && app.waiting.isEmpty)
            #expect(try await queue.waiting.isEmpty)
            let status = try await client.send(API.TwoFactor.status, bearer: try await session.accessToken())
            #expect(status.totp.enabled == false, "the setup was started, not finished")
        }
    }

    // MARK: Seed 003's auth guard and seed 002's app lock

    @Test(.timeLimit(.minutes(2))) func theAuthGuardAndTheAppLock() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("gil")
            let store = MemoryTokenStore()
            let phone = VirtualPhone(.faceID)
            let app = AppModel(session: SessionManager(client: target.client, store: store), gate: phone)
            await app.launch()
            #expect(app.screen == .signIn)
            // The app follows the session: the sign-in screen's success shows the protected
            // screens without being told.
            let following = Task { await app.follow() }
            defer { following.cancel() }

            let screen = SignInModel(flow: SignInFlow(client: target.client, session: app.session))
            screen.name = "gil"
            screen.password = TestAccounts.password
            await screen.signIn()
            guard case .signedIn(let user) = screen.phase else {
                Issue.record("not signed in: \(screen.phase)")
                return
            }
            try await Self.until { app.screen == .home(user) }
            #expect(app.screen == .home(user))

            // The app comes back with the lock on: locked, the session kept; a cancelled prompt
            // leaves it locked (and signed in); the prompt unlocks.
            app.setLock(true)
            app.didEnterForeground()
            #expect(app.screen == .locked(user))
            await phone.cancelNextPrompt()
            await app.unlock()
            #expect(app.screen == .locked(user) && app.lockProblem == "Unlock to see your account.")
            await app.unlock()
            #expect(app.screen == .home(user) && app.lockProblem == nil)

            // A new launch restores the kept session without a request, behind the lock.
            let relaunched = AppModel(
                session: SessionManager(client: target.client, store: store), gate: phone, lockEnabled: true)
            await relaunched.launch()
            #expect(relaunched.screen == .locked(user))

            // A store not readable yet (before the first unlock) is not signed out.
            await store.setReadable(false)
            let early = AppModel(session: SessionManager(client: target.client, store: store))
            await early.launch()
            #expect(early.screen == .waitingForStore)
            await store.setReadable(true)
            await early.launch()
            #expect(early.screen == .home(user))

            // Signing out ends the session at the server too.
            let token = try await app.session.accessToken()
            await app.signOut()
            #expect(app.screen == .signIn)
            await #expect(throws: APIError.self) { try await target.client.send(API.Account.show, bearer: token) }

            // A session revoked elsewhere: the next call finds it refused, and the app, wherever
            // it was, shows the sign-in screen.
            let again = SignInModel(flow: SignInFlow(client: target.client, session: app.session))
            (again.name, again.password) = ("gil", TestAccounts.password)
            await again.signIn()
            try await Self.until {
                if case .home = app.screen { true } else { false }
            }
            let revoked = try await app.session.accessToken()
            _ = try await target.client.send(API.Auth.logoutAll, bearer: revoked)
            _ = try? await app.session.authorized(stepUp: nil) {
                try await target.client.send(API.Account.show, bearer: $0)
            }
            try await Self.until { app.screen == .signIn }
            #expect(app.screen == .signIn)
        }
    }

    /// Waits (up to 10 s) until `condition` holds, for models that follow a stream.
    static func until(_ condition: @MainActor () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Seed 002's details on the challenge and seed 000's backup-code warnings on the hub: the
    /// authenticator's countdown, a masked backup code, the warning the server flags at three
    /// codes left and the red one with "Contact Support" at none.
    @Test(.timeLimit(.minutes(2))) func backupCodeWarningsCountdownAndMaskedCodes() async throws {
        try await TestServers.withTarget { target in
            let (_, codes) = try await SDKAccounts.accountWithTOTP(target.client, "una")
            // 20 seconds into a 30-second period (1,800,000,000 is a multiple of 30): the
            // authenticator's code changes in 10.
            let noon = Date(timeIntervalSince1970: 1_800_000_020)
            let screen = SignInModel(
                flow: SignInFlow(
                    client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore())),
                clock: { noon })
            screen.name = "una"
            screen.password = TestAccounts.password
            await screen.signIn()
            #expect(screen.method == .totp && screen.totpCountdown() == 10)
            await screen.select(.backup)
            #expect(screen.totpCountdown() == nil && screen.code.isMasked)
            await screen.type("ab2c")
            #expect(screen.code.shownText == "•••c" && screen.code.shown(at: 0) == "•")

            // The hub: no warning with ten codes; at three, the server's flag; at none, red and help.
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            var left = codes
            func signInWithBackupCode() async throws {
                guard
                    case .secondStep(let flow) = try await target.client.send(
                        API.Auth.login, LoginRequest(username: "una", password: TestAccounts.password))
                else { throw Unexpected("no second step") }
                await session.signedIn(
                    try await target.client.send(
                        API.SecondStep.verifyBackupCode,
                        BackupCodeVerifyRequest(otpFlowId: flow.otpFlowId, backupCode: left.removeFirst())))
            }
            try await signInWithBackupCode()
            let support = try #require(URL(string: "mailto:help@example.com"))
            let hub = SecurityHubModel(
                security: AccountSecurity(session: session), stepUp: StepUpPrompt(session: session), support: support)
            await hub.load()
            #expect(hub.backupCodesWarning == nil && hub.headline == "Two-step sign-in is on.")
            while left.count > 3 { try await signInWithBackupCode() }
            await hub.load()
            #expect(hub.backupCodesWarning == .low(left: 3), "\(String(describing: hub.status?.backupCodes))")
            #expect(hub.headline.contains("Only 3 backup codes left"))
            while !left.isEmpty { try await signInWithBackupCode() }
            await hub.load()
            #expect(hub.backupCodesWarning == .noneLeft && hub.headline.contains("no backup codes left"))
            #expect(hub.support == support)
        }
    }

    /// Seed 000's passkey nudge: after a code sign-in on an account with no passkey; "Maybe
    /// later" brings it back after 7 days, three times at most; not after a passkey; a passkey
    /// made ends it.
    @Test(.timeLimit(.minutes(2))) func thePasskeyNudgeFollowsTheSeedsSchedule() async throws {
        try await TestServers.withTarget { target in
            let (secret, _) = try await SDKAccounts.accountWithTOTP(target.client, "vic")
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            let flow = SignInFlow(client: target.client, session: session)
            _ = await flow.signIn("vic", password: TestAccounts.password)
            guard case .signedIn = await flow.submit(code: try Self.code(secret, offset: 30)) else {
                Issue.record("not signed in: \(await flow.state)")
                return
            }
            let now = Mutex(Date())
            let passkeys = VirtualPasskeys(VirtualAuthenticator(origin: "http://localhost:\(target.server.port)"))
            let store = MemoryPasskeyNudgeStore()
            let nudge = PasskeyNudgeModel(
                security: AccountSecurity(session: session, passkeys: passkeys), store: store,
                clock: { now.withLock { $0 } })
            await nudge.signedIn(username: "vic", with: .webauthn)
            #expect(!nudge.isShown, "not after a passkey")
            for round in 1...3 {
                await nudge.signedIn(username: "vic", with: .totp)
                #expect(nudge.isShown, "shown, round \(round)")
                nudge.maybeLater()
                await nudge.signedIn(username: "vic", with: .sms)
                #expect(!nudge.isShown, "not again within 7 days")
                now.withLock { $0.addTimeInterval(7 * 24 * 3600 + 1) }
            }
            await nudge.signedIn(username: "vic", with: .totp)
            #expect(!nudge.isShown, "three times at most")

            // Another account's nudge is its own; a passkey made there ends it.
            let fresh = PasskeyNudgeModel(
                security: AccountSecurity(session: session, passkeys: passkeys), store: store,
                clock: { now.withLock { $0 } })
            await fresh.signedIn(username: "vic-on-another-phone", with: .email)
            #expect(fresh.isShown)
            await fresh.addPasskey()
            #expect(!fresh.isShown && fresh.problem == nil, "\(String(describing: fresh.problem))")
            #expect(store.nudge(for: "vic-on-another-phone").settled)
        }
    }

    /// Seed 000's links opened in the app wait for the screen they lead to: settings links once
    /// signed in and unlocked, the recovery email's link while signed out; others are not the app's.
    @Test func linksOpenedInTheAppWaitForTheirScreen() async throws {
        let app = AppModel(session: ScreenFixtures.session())
        #expect(!app.open(try #require(URL(string: "https://example.com/settings/2fa"))))
        #expect(app.open(try #require(URL(string: "twofold://settings/2fa/setup-totp"))))
        #expect(app.linkToShow == nil, "launching: it waits")
        await app.launch()
        #expect(app.screen == .signIn && app.linkToShow == nil, "signed out: a settings link waits")
        #expect(app.open(try #require(URL(string: "twofold://2fa/recovery?token=abc123"))))
        #expect(app.linkToShow == .recovery(token: "abc123"))
        app.linkShown()
        app.signedIn(ScreenFixtures.user)
        #expect(app.open(try #require(URL(string: "otpauth://totp/Acme:pat@example.com?secret=JBSWY3DPEHPK3PXP"))))
        guard case .authenticator(let uri)? = app.linkToShow else {
            Issue.record("not an authenticator link: \(String(describing: app.linkToShow))")
            return
        }
        #expect(uri.account == "pat@example.com")
        #expect(!app.open(try #require(URL(string: "twofold://2fa/recovery?token=abc123"))))
        #expect(app.link != .recovery(token: "abc123"), "signed in: a recovery link is not kept for a later sign-out")
        #expect(app.open(try #require(URL(string: "twofold://settings/2fa/backup-codes"))))
        #expect(app.linkToShow == .backupCodes)
        app.linkShown()
        #expect(app.link == nil && app.linkToShow == nil)

        // The recovery email's web link, opened in the app as a universal link: only its server's.
        let signedOut = AppModel(session: ScreenFixtures.session())
        await signedOut.launch()
        #expect(!signedOut.open(try #require(URL(string: "https://other.example.com/recovery/pass?token=abc123"))))
        #expect(signedOut.open(try #require(URL(string: "https://mfa.example.com/recovery/pass?token=abc123"))))
        #expect(signedOut.linkToShow == .recovery(token: "abc123"))
    }

    // MARK: Seed 000: the hub, the authenticator wizard, backup codes, SMS codes, passkeys

    @Test(.timeLimit(.minutes(2))) func securityScreensSetUpAndGuardChanges() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("hal")
            let session = try await DeviceKeySessions.session(target, "hal")
            let prompt = StepUpPrompt(session: session)
            let unexpected = Self.failUnexpectedQuestions(prompt)
            defer { unexpected.cancel() }
            let passkeys = VirtualPasskeys(VirtualAuthenticator(origin: "http://localhost:\(target.server.port)"))
            let security = AccountSecurity(session: session, stepUp: prompt.provider, passkeys: passkeys)
            let hub = SecurityHubModel(security: security, stepUp: prompt)
            await hub.load()
            #expect(hub.status != nil && !hub.isProtected && hub.headline.hasPrefix("Two-step sign-in is off"))

            // The wizard: the secret grouped for reading and copied; a wrong code refused.
            let wizard = AuthenticatorSetupModel(security: security)
            await wizard.start()
            guard case .scan(let setup) = wizard.step else {
                Issue.record("no QR step: \(wizard.step) \(String(describing: wizard.problem))")
                return
            }
            #expect(setup.qrCodeSVG.contains("<svg") && wizard.secretForReading.contains(" "))
            #expect(wizard.copySecret() == setup.secret && wizard.copied)
            let secret = try Base32.decode(setup.secret)
            let wrong = try SDKAccounts.wrongCode(secret)
            await wizard.type(wrong)
            #expect(wizard.problem == .wrongCode(attemptsRemaining: nil) || wizard.problem?.isWrongCode == true)
            #expect(wizard.feedback?.kind == .error && wizard.code.text.isEmpty)
            await wizard.type(try Self.code(secret))
            guard case .done(let codes?) = wizard.step else {
                Issue.record("not done: \(wizard.step) \(String(describing: wizard.problem))")
                return
            }
            #expect(codes.count == 10 && wizard.feedback?.kind == .success)

            // The backup codes: not left until saved.
            let backup = BackupCodesModel(security: security, codes: codes)
            #expect(!backup.canFinish && backup.text.split(separator: "\n").count == 10)
            backup.finish()
            #expect(backup.codes.count == 10)
            backup.saved = true
            backup.finish()
            #expect(backup.codes.isEmpty)

            await hub.load()
            #expect(hub.isProtected && hub.status?.totp.enabled == true)

            // A factor vouches only for later sessions: the person signs in again with it, and
            // has this device remembered; the next password sign-in skips the code. That session
            // proved the password alone.
            let remembered = MemoryRememberedDevices()
            let again = SignInModel(
                flow: SignInFlow(client: target.client, session: session, rememberedDevices: remembered))
            again.name = "hal"
            again.password = TestAccounts.password
            again.rememberDevice = true
            await again.signIn()
            await again.type(try Self.code(secret, offset: 30))
            #expect(again.phase.isSignedIn, "\(String(describing: again.problem))")
            let passwordOnly = SignInModel(
                flow: SignInFlow(client: target.client, session: session, rememberedDevices: remembered))
            passwordOnly.name = "hal"
            passwordOnly.password = TestAccounts.password
            await passwordOnly.signIn()
            #expect(passwordOnly.phase.isSignedIn, "\(passwordOnly.phase)")

            // Seed 002: the remembered device is listed; forgotten, the next sign-in asks again.
            let devices = RememberedDevicesModel(security: security)
            await devices.load()
            #expect(devices.loaded && devices.devices.count == 1, "\(devices.devices)")
            let device = try #require(devices.devices.first)
            #expect(RememberedDevicesModel.detail(device).hasPrefix("Last used "))
            await devices.forget(device)
            #expect(devices.devices.isEmpty && devices.problem == nil, "\(String(describing: devices.problem))")
            let asksAgain = SignInModel(
                flow: SignInFlow(client: target.client, session: session, rememberedDevices: remembered))
            asksAgain.name = "hal"
            asksAgain.password = TestAccounts.password
            await asksAgain.signIn()
            #expect(asksAgain.phase == .challenge, "\(asksAgain.phase)")

            // Turning the authenticator off asks for another proof (the password, an email code);
            // cancelled, nothing changes.
            var asked: StepUpPrompt.Question?
            try await Self.answering(
                prompt,
                with: {
                    asked = $0.question
                    $0.cancel()
                }
            ) {
                await hub.removeAuthenticator()
            }
            #expect(hub.problem == .cancelled && hub.status?.totp.enabled == true, "\(String(describing: hub.problem))")
            #expect(
                asked?.need == "otherProof" && asked?.methods.contains(.password) == true,
                "\(String(describing: asked))")
            #expect(asked?.methods.contains(.email) == true && prompt.question == nil)

            // SMS codes: the number, a wrong code, the right one.
            let sms = CodeChannelSetupModel(security: security, channel: .sms)
            sms.phone = "+14155550142"
            let before = try target.gateway.messages().count
            // Adding a factor needs a recent second factor: the prompt offers the account's, and a
            // backup code answers it.
            asked = nil
            try await Self.answering(
                prompt,
                with: {
                    asked = $0.question
                    $0.choose(.backup)
                    // "Confirm" waits for a whole code.
                    $0.code.update(String(codes[0].prefix(4)))
                    #expect(!$0.canConfirm)
                    $0.code.update(codes[0])
                    #expect($0.canConfirm)
                    $0.confirm()
                }
            ) {
                await sms.send()
            }
            #expect(
                asked?.need == "recentSecondFactor" && asked?.methods == [.totp, .backup],
                "\(String(describing: asked))")
            #expect(
                sms.sentTo?.hasSuffix("42") == true && sms.sentTo != sms.phone, "\(String(describing: sms.problem))")
            let sent = try #require(try await target.gateway.nextMessage(after: before)?.code)
            // Another code only after the countdown: sending again now sends nothing.
            #expect(sms.resendCountdown() > 0 && !sms.canSend, "\(String(describing: sms.resendAvailableAt))")
            await sms.send()
            #expect(try target.gateway.messages().count == before + 1)
            await sms.type(sent == "000000" ? "111111" : "000000")
            #expect(sms.problem?.isWrongCode == true && sms.done == nil, "\(String(describing: sms.problem))")
            await sms.type(sent)
            #expect(sms.done != nil && sms.problem == nil, "\(String(describing: sms.problem))")

            // Passkeys: a cancelled sheet changes nothing; then one is added, listed as the
            // authenticator made it, renamed, and signs in alone.
            let keys = PasskeysModel(security: security)
            await passkeys.setCancels(true)
            await keys.add(name: "Phone")
            #expect(keys.problem == .cancelled && keys.passkeys.isEmpty, "\(String(describing: keys.problem))")
            await passkeys.setCancels(false)
            await keys.add(name: "Phone")
            #expect(keys.passkeys.map(\.name) == ["Phone"], "\(String(describing: keys.problem))")
            #expect(keys.passkeys.first.map(PasskeysModel.kind) == "This device only")
            let added = try #require(keys.passkeys.first)
            await keys.rename(added.id, to: "<script>x</script>")
            #expect(keys.passkeys.first?.name == "<script>x</script>")

            // New backup codes: the old ones stop working.
            try await Self.answering(
                prompt,
                with: {
                    $0.choose(.backup)
                    $0.code.update(codes[1])
                    $0.confirm()
                }
            ) {
                await backup.regenerate()
            }
            #expect(
                backup.codes.count == 10 && Set(backup.codes).isDisjoint(with: codes),
                "\(String(describing: backup.problem))")
            #expect(!backup.canFinish)

            let passkeySignIn = SignInModel(
                flow: SignInFlow(
                    client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()),
                    passkeys: passkeys))
            await passkeys.setCancels(true)
            await passkeySignIn.signInWithPasskey()
            #expect(passkeySignIn.problem == .cancelled && passkeySignIn.phase == .credentials)
            await passkeys.setCancels(false)
            await passkeySignIn.signInWithPasskey()
            guard case .signedIn(let passkeyUser) = passkeySignIn.phase else {
                Issue.record(
                    "the passkey did not sign in: \(passkeySignIn.phase) \(String(describing: passkeySignIn.problem))")
                return
            }
            #expect(passkeyUser.username == "hal")
            // Seed 000's "Signed in with <name>": the passkey's own name, shown once.
            let named = try #require(passkeySignIn.passkeyName)
            #expect(keys.passkeys.map(\.name).contains(named))
            let signedInApp = AppModel(session: ScreenFixtures.session())
            signedInApp.signedIn(passkeyUser, with: passkeySignIn.passkeyName)
            #expect(signedInApp.signedInWith == "Signed in with \(named)")
            signedInApp.signedInWithShown()
            #expect(signedInApp.signedInWith == nil)
            signedInApp.signedIn(passkeyUser)
            #expect(signedInApp.signedInWith == nil, "a sign-in without a passkey says nothing of one")

            // The keyboard's autofill bar: while its request waits, the form stays usable and a
            // password sign-in goes on undisturbed (the request ending later changes nothing);
            // a request that ends unpicked says nothing; a passkey picked from it signs in.
            let autofill = SignInModel(
                flow: SignInFlow(
                    client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore())))
            let bar = AutofillBar(passkeys)
            let first = Task { await autofill.offerPasskeysInAutofill(using: bar) }
            try await bar.waitUntilAsked()
            #expect(autofill.phase == .credentials)
            (autofill.name, autofill.password) = ("hal", TestAccounts.password)
            await autofill.signIn()
            #expect(autofill.phase == .challenge, "\(autofill.phase) \(String(describing: autofill.problem))")
            await bar.answer(picked: true)
            await first.value
            #expect(autofill.phase == .challenge, "a passkey picked late took over a sign-in under way")
            await autofill.startOver()
            let unpicked = Task { await autofill.offerPasskeysInAutofill(using: bar) }
            try await bar.waitUntilAsked()
            await bar.answer(picked: false)
            await unpicked.value
            #expect(autofill.phase == .credentials && autofill.problem == nil)
            let picked = Task { await autofill.offerPasskeysInAutofill(using: bar) }
            try await bar.waitUntilAsked()
            await bar.answer(picked: true)
            await picked.value
            guard case .signedIn(let autofilled) = autofill.phase else {
                Issue.record("the autofilled passkey did not sign in: \(autofill.phase)")
                return
            }
            #expect(autofilled.username == "hal")

            // The network gone: every screen says so.
            let cut = AccountSecurity(session: SessionManager(client: Self.unreachable, store: MemoryTokenStore()))
            let offlineHub = SecurityHubModel(security: cut, stepUp: StepUpPrompt())
            await offlineHub.load()
            #expect(offlineHub.problem == .refused(.unauthorized, "You were signed out. Sign in again."))
            let offlineWizard = AuthenticatorSetupModel(
                security: AccountSecurity(session: try await Self.offline(session)))
            await offlineWizard.start()
            #expect(offlineWizard.problem == .offline, "\(String(describing: offlineWizard.problem))")
        }
    }

    /// `session`'s tokens kept by a manager whose server has gone away (its client points at a
    /// closed port).
    static func offline(_ session: SessionManager) async throws -> SessionManager {
        let kept = try #require(await session.session)
        let cut = SessionManager(client: Self.unreachable, store: MemoryTokenStore())
        await cut.signedIn(
            AuthTokensResponse(accessToken: kept.accessToken, refreshToken: kept.refreshToken, user: kept.user))
        return cut
    }

    // MARK: Seed 000: recovery

    @Test(.timeLimit(.minutes(2))) func recoveryScreenStartsAndRefusesAWrongCode() async throws {
        try await TestServers.withTarget { target in
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            let recovery = RecoveryModel(recovery: AccountRecovery(client: target.client), session: session)
            #expect(recovery.stateText.hasPrefix("Tell us which account"))
            recovery.email = "nobody@example.com"
            recovery.message = "I lost my phone"
            await recovery.start()
            #expect(recovery.request?.state == .pendingEmail && recovery.problem == nil)
            #expect(recovery.stateText == "Enter the code we emailed you.")
            await recovery.type("000000")
            #expect(recovery.problem?.isWrongCode == true, "\(String(describing: recovery.problem))")
            #expect(recovery.request?.state == .pendingEmail && recovery.code.text.isEmpty)
            recovery.pass = "not-a-pass"
            await recovery.redeem()
            #expect(recovery.signedIn == nil && recovery.problem != nil)
            // Starting again clears the request and the fields.
            recovery.restart()
            #expect(recovery.request == nil && recovery.email.isEmpty && recovery.problem == nil)
            #expect(recovery.stateText.hasPrefix("Tell us which account"))

            // The approval email's link opened in the app: the pass waits, with what using it does,
            // until the person chooses it; "Not now" forgets it.
            let linked = RecoveryModel(recovery: AccountRecovery(client: target.client), session: session)
            linked.openLink(pass: "not-a-pass")
            #expect(linked.fromLink && linked.signedIn == nil && !linked.working && linked.problem == nil)
            #expect(linked.stateText.hasPrefix("Signing in with this link removes every sign-in method"))
            await linked.redeem()
            #expect(linked.signedIn == nil && linked.problem != nil, "a pass is used only when chosen, and checked")
            linked.restart()
            #expect(!linked.fromLink && linked.pass.isEmpty && linked.stateText.hasPrefix("Tell us which account"))

            let offline = RecoveryModel(recovery: AccountRecovery(client: Self.unreachable), session: session)
            offline.email = "nobody@example.com"
            await offline.start()
            #expect(offline.problem == .offline && offline.request == nil)
        }
    }

    // MARK: Seed 004: enrolment, authentication, settings

    /// Seed 004 scenarios 8–10 noticed by the app, not pressed on the dashboard: the passcode
    /// turned off deletes the key (alert, then SMS codes); back on, "Upgrade to biometric
    /// security?" makes a new key; a changed biometric set loses the key, set up again.
    @Test(.timeLimit(.minutes(2))) func theAppNoticesSecurityChangesOnItsOwn() async throws {
        try await TestServers.withTarget { target in
            // Eve signs in with the password and the code texted to her.
            try await target.enableSMS(try await target.register("eve"), phone: "+14155550177")
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            let texted = try target.gateway.messages().count
            let eve = SignInFlow(client: target.client, session: session)
            _ = await eve.signIn("eve", password: TestAccounts.password)
            let code = try #require(try await target.gateway.nextMessage(after: texted)?.code)
            guard case .signedIn = await eve.submit(code: code) else {
                Issue.record("not signed in: \(await eve.state)")
                return
            }
            let prompt = StepUpPrompt(session: session)
            let unexpected = Self.failUnexpectedQuestions(prompt)
            defer { unexpected.cancel() }
            let answer = Self.answerWithSMS(target.gateway)
            let phone = VirtualPhone(.faceID)
            let flows = DeviceKeyFlows(session: session, device: phone, deviceID: "eve-phone", stepUp: prompt.provider)
            var enrolled: DeviceEnrolment?
            try await Self.answering(prompt, with: answer) { enrolled = try await flows.enroll(username: "eve") }
            #expect(enrolled == .enrolled(.biometric))
            let settings = DeviceSettingsModel(flows: flows, session: session, username: "eve")
            await settings.check()
            #expect(settings.change == nil, "nothing changed yet")

            // Scenario 8: the passcode is turned off; the app notices and moves to SMS codes.
            await phone.removeSecurity()
            await settings.check()
            #expect(
                settings.change == .securityRemoved && settings.changeText?.contains("no longer has a passcode") == true
            )
            try await Self.answering(prompt, with: answer) { await settings.useSMSOnly() }
            #expect(settings.device?.method == "smsOTP", "\(String(describing: settings.message))")

            // Scenario 9: security is back; the app offers the upgrade, and a new key is made.
            await phone.set(.faceID)
            await settings.check()
            #expect(settings.change == .canUpgrade(.faceID) && settings.changeText?.contains("Face ID") == true)
            try await Self.answering(prompt, with: answer) { await settings.switchTo(.biometric) }
            #expect(
                settings.device?.method == "secureEnclave" && settings.change == nil,
                "\(String(describing: settings.message))")

            // Seed 001's danger: the enrolled faces change; the biometric key is gone.
            await phone.changeBiometricSet()
            await settings.check()
            #expect(settings.change == .keyLost)
            try await Self.answering(prompt, with: answer) { await settings.switchTo(.biometric) }
            #expect(settings.change == nil, "\(String(describing: settings.message))")

            // A phone that keeps the key listed: the changed biometric set tells it all the same.
            await phone.changeBiometricSet(keepingItems: true)
            await settings.check()
            #expect(settings.change == .keyLost, "a listed key that no longer signs")
            // A passcode key is not a biometric key: a change of the faces leaves it alone.
            try await Self.answering(prompt, with: answer) { await settings.switchTo(.passcode) }
            #expect(settings.device?.method == "secureEnclave", "\(String(describing: settings.message))")
            await phone.changeBiometricSet(keepingItems: true)
            await settings.check()
            #expect(settings.change == nil, "the passcode key still signs")
        }
    }

    @Test(.timeLimit(.minutes(2))) func deviceScreensAlongFlowsABC() async throws {
        try await TestServers.withTarget { target in
            // A number on file first; then a session the password and an SMS code began.
            let phoneNumber = "+14155550143"
            try await target.enableSMS(try await target.register("dee"), phone: phoneNumber)
            let session = SessionManager(client: target.client, store: MemoryTokenStore())
            let smsSignIn = SignInModel(flow: SignInFlow(client: target.client, session: session))
            smsSignIn.name = "dee"
            smsSignIn.password = TestAccounts.password
            let mark = try target.gateway.messages().count
            await smsSignIn.signIn()
            #expect(smsSignIn.method == .sms && smsSignIn.resendCountdown() != nil)
            await smsSignIn.type(try #require(try await target.gateway.nextMessage(after: mark)?.code))
            #expect(smsSignIn.phase.isSignedIn, "\(smsSignIn.phase) \(String(describing: smsSignIn.problem))")
            // Step-ups answered with an SMS code, as the person would.
            let answerWithSMS = Self.answerWithSMS(target.gateway)
            let phone = VirtualPhone(.faceID)
            let prompt = StepUpPrompt(session: session)
            let unexpected = Self.failUnexpectedQuestions(prompt)
            defer { unexpected.cancel() }
            let flows = DeviceKeyFlows(session: session, device: phone, deviceID: "dee-phone", stepUp: prompt.provider)

            // Flow A: the choice; a declined Face ID prompt offers the passcode; the passcode enrols.
            let enrolment = EnrollmentModel(flows: flows, device: phone, username: "dee")
            await enrolment.check()
            #expect(enrolment.phase == .choose(.faceID))
            await phone.cancelNextPrompt()
            await enrolment.useBiometrics()
            #expect(enrolment.phase == .offerPasscode && enrolment.failure == .userCancel)
            #expect(enrolment.message == "Use Passcode Instead?")
            await enrolment.usePasscode()
            #expect(enrolment.phase == .enrolled(.passcode), "\(String(describing: enrolment.message))")

            // Flow B and flow C, read from the phone.
            let noFace = VirtualPhone(.biometryNotEnrolled)
            let flowB = EnrollmentModel(
                flows: DeviceKeyFlows(session: session, device: noFace, deviceID: "dee-b"), device: noFace,
                username: "dee")
            await flowB.check()
            #expect(flowB.phase == .passcodeOnly && flowB.message == "Using passcode authentication")
            let insecure = VirtualPhone(.noSecurity)
            let flowC = EnrollmentModel(
                flows: DeviceKeyFlows(session: session, device: insecure, deviceID: "dee-c"), device: insecure,
                username: "dee")
            await flowC.check()
            #expect(flowC.phase == .noSecurity && flowC.message == "Please set up device passcode in Settings")
            await flowC.useBiometrics()
            #expect(flowC.phase == .noSecurity && flowC.failure == .passcodeNotSet)

            // Authentication: the key signs; a cancelled prompt offers SMS with the seed's words.
            let signedOut = DeviceKeyFlows(
                session: SessionManager(client: target.client, store: MemoryTokenStore()), device: phone,
                deviceID: "dee-phone")
            let auth = DeviceSignInModel(flows: signedOut)
            auth.username = "dee"
            await auth.signIn()
            #expect(auth.phase.isSignedIn, "\(auth.phase) \(String(describing: auth.message))")
            auth.startOver()
            await phone.cancelNextPrompt()
            await auth.signIn()
            #expect(auth.failure == .userCancel && auth.message == "User cancelled - offer passcode")
            // A key device is never offered SMS codes (the server sends none to it): the prompt
            // again, or the password.
            #expect(auth.offerRetry && auth.offerPassword && !auth.offerSMS)

            // Settings: the method, the number masked, switching to Face ID (the server asks for a
            // proof: the password, then a fresh code), unenrolling deletes the key.
            let settings = DeviceSettingsModel(flows: flows, session: session, username: "dee")
            await settings.load()
            #expect(settings.device?.method == "secureEnclave" && settings.methodText.contains("Secure Enclave"))
            #expect(settings.canUseBiometry && settings.switchToBiometryTitle == "Switch to Face ID")
            #expect(settings.phone?.hasSuffix("43") == true && settings.phone?.contains("415") == false)
            try await Self.answering(prompt, with: answerWithSMS) {
                await settings.switchTo(.biometric)
            }
            #expect(await phone.prompts.last == .biometric, "\(String(describing: settings.message))")
            try await Self.answering(prompt, with: answerWithSMS) {
                await settings.unenroll()
            }
            #expect(settings.device == nil, "\(String(describing: settings.message))")
            #expect(!(await phone.hasKey(tag: flows.tag(for: "dee"))))

            // A device enrolled for SMS codes: the server asks for a code; a wrong one, the right one.
            let smsPhone = VirtualPhone(.noSecurity)
            let smsFlows = DeviceKeyFlows(
                session: session, device: smsPhone, deviceID: "dee-sms", stepUp: prompt.provider)
            try await Self.answering(prompt, with: answerWithSMS) {
                _ = try await smsFlows.enrollForSMS(username: "dee")
            }
            let smsAuth = DeviceSignInModel(
                flows: DeviceKeyFlows(
                    session: SessionManager(client: target.client, store: MemoryTokenStore()), device: smsPhone,
                    deviceID: "dee-sms"))
            smsAuth.username = "dee"
            await smsAuth.signIn()
            let smsPrompts = await smsPhone.prompts
            #expect(smsAuth.offerSMS && !smsAuth.offerRetry && smsPrompts.isEmpty)
            let before = try target.gateway.messages().count
            await smsAuth.useSMS()
            guard case .smsCode = smsAuth.phase else {
                Issue.record("no code step: \(smsAuth.phase) \(String(describing: smsAuth.message))")
                return
            }
            let sent = try #require(try await target.gateway.nextMessage(after: before)?.code)
            await smsAuth.type(sent == "000000" ? "111111" : "000000")
            #expect(smsAuth.message?.hasPrefix("That code is wrong") == true, "\(String(describing: smsAuth.message))")
            await smsAuth.type(sent)
            #expect(smsAuth.phase.isSignedIn, "\(smsAuth.phase) \(String(describing: smsAuth.message))")

            // Wrong codes lock the SMS sign-in: said in words.
            let locking = DeviceSignInModel(
                flows: DeviceKeyFlows(
                    session: SessionManager(client: target.client, store: MemoryTokenStore()), device: smsPhone,
                    deviceID: "dee-sms"))
            locking.username = "dee"
            await locking.useSMS()
            var messages: [String] = []
            for _ in 0..<7 {
                await locking.type("000001")
                messages.append(locking.message ?? "")
            }
            // Anyone can ask for this sign-in with a username, so every refusal reads alike (no
            // attempts left, no lock shown: issue S item 3); none signs in.
            #expect(
                !locking.phase.isSignedIn && messages.allSatisfy { $0.hasPrefix("That code is wrong") }, "\(messages)")

            // The network gone.
            let offline = DeviceSignInModel(
                flows: DeviceKeyFlows(
                    session: SessionManager(client: Self.unreachable, store: MemoryTokenStore()), device: phone,
                    deviceID: "dee-phone"))
            offline.username = "dee"
            await offline.signIn()
            #expect(offline.message == SignInProblem.offline.message && offline.phase == .username)
        }
    }
    // MARK: Seed 004's testing dashboard

    /// The dashboard model on a virtual phone: the switches change what the status says and what
    /// the actions meet (LocalAuthentication's codes in the log), a scenario runs with its code
    /// typed into the code field, and the network gone is a failed line, not a crash.
    @Test(.timeLimit(.minutes(1))) func theTestingDashboardModel() async throws {
        try await TestServers.withTarget(environment: ["TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS": "100/1"]) {
            target in
            let phone = VirtualPhone(.faceID)
            let dashboard = TestingDashboardModel(
                client: target.client, device: phone, deviceID: "bench-phone",
                origin: "http://localhost:\(target.server.port)")
            await dashboard.refresh()
            #expect(dashboard.status?.capability == .biometricsAvailable && dashboard.switches?.capabilities == .faceID)
            #expect(dashboard.scenarios.map(\.number) == Array(1...10) + [13])

            // A person reading the phone: each awaited code typed from the gateway.
            let reader = Task { @MainActor in
                var used = (try? target.gateway.messages().count) ?? 0
                while !Task.isCancelled {
                    if dashboard.awaitingCode != nil, let all = try? target.gateway.messages(),
                        let index = all.indices.last(where: { $0 >= used && all[$0].code != nil }),
                        let code = all[index].code
                    {
                        used = index + 1
                        await dashboard.submitCode(code)
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { reader.cancel() }

            await dashboard.run(.action(.enrollBiometric))
            #expect(dashboard.log.contains { $0.outcome == "key registered (biometric)" }, "\(dashboard.log)")
            #expect(dashboard.status?.hasKey == true && dashboard.status?.method == "secureEnclave")
            await dashboard.run(.action(.testAuthentication))
            #expect(dashboard.log.last?.outcome.hasPrefix("signed in as dash-") == true, "\(dashboard.log)")

            // The declined prompt, then biometrics locked out: each with its LAError.
            await dashboard.run(.action(.simulateBiometricDecline))
            #expect(dashboard.log.last?.reason == "LAError.userCancel (-2): User cancelled - offer passcode")
            await dashboard.flip(.lockout(true))
            await dashboard.run(.action(.testAuthentication))
            #expect(dashboard.log.last?.reason == "LAError.biometryLockout (-8): Too many attempts - use passcode")
            await dashboard.flip(.lockout(false))

            // A new key, then SMS: the number's code typed into the field.
            await dashboard.run(.action(.reEnroll))
            #expect(
                dashboard.log.suffix(4).contains {
                    $0.action == "re-enroll" && $0.outcome == "key registered (biometric)"
                },
                "\(dashboard.log.suffix(4))")
            await dashboard.run(.action(.switchToSMSFallback))
            #expect(
                dashboard.status?.method == "smsOTP",
                "\(dashboard.log.suffix(4))")
            await dashboard.run(.action(.testAuthentication))
            #expect(dashboard.log.last?.action == "test authentication with an SMS code", "\(dashboard.log.suffix(3))")

            // The passcode removed: every key gone, the status and the check say so.
            await dashboard.flip(.passcode(false))
            #expect(
                dashboard.status?.capability == DeviceCapability.none
                    && dashboard.switches?.capabilities.passcodeSet == false)
            await dashboard.run(.action(.checkDeviceSecurity))
            #expect(dashboard.log.last?.reason == "LAError.passcodeNotSet (-5): Critical: No device security")
            await dashboard.flip(.passcode(true))
            await dashboard.flip(.biometryEnrolled(true))
            #expect(dashboard.status?.capability == .biometricsAvailable)

            // Scenario 7 waits for a code, typed into the field; it passes.
            await dashboard.run(.scenario(7))
            #expect(dashboard.scenarios[6].result == "passed", "\(dashboard.log.suffix(8))")
            #expect(dashboard.log.last?.outcome == "PASSED" && dashboard.scenarioPhone?.number == 7)
            #expect(dashboard.log.contains { $0.source == "scenario 7" && $0.action.hasPrefix("set the phone") })
            #expect(!dashboard.snapshot.log.isEmpty && dashboard.snapshot.scenarios.count == 11)

            // Only one thing runs at a time.
            #expect(dashboard.start(.action(.checkDeviceSecurity)))
            #expect(!dashboard.start(.action(.checkDeviceSecurity)))

            // A code nobody types: stopping ends the wait and says so; without a stop, the wait
            // ends when the code could no longer work (here after 2 seconds).
            let unread = TestingDashboardModel(
                client: target.client, device: VirtualPhone(.faceID), deviceID: "unread-phone",
                origin: "http://localhost:\(target.server.port)", codeWait: .seconds(2))
            #expect(unread.start(.scenario(7)))
            try await Self.until { unread.awaitingCode != nil }
            #expect(unread.awaitingCode != nil && unread.running != nil)
            unread.stop()
            try await Self.until { unread.running == nil }
            #expect(unread.running == nil && unread.awaitingCode == nil && unread.scenarios[6].result == "failed")
            #expect(unread.log.last?.reason == "stopped from the dashboard", "\(unread.log.suffix(3))")
            let started = Date()
            await unread.run(.scenario(7))
            #expect(unread.scenarios[6].result == "failed" && unread.awaitingCode == nil)
            #expect(
                unread.log.contains { "\($0.outcome) \($0.reason ?? "")".contains("no code was typed in time") },
                "\(unread.log.suffix(4))")
            #expect(Date().timeIntervalSince(started) < 30)

            // The network gone: a failed line.
            let offline = TestingDashboardModel(client: Self.unreachable, device: VirtualPhone(), deviceID: "cut")
            await offline.run(.action(.enrollBiometric))
            #expect(offline.log.last?.failed == true, "\(offline.log)")
        }
    }
}

extension DeviceSignInModel.Phase {
    var isSignedIn: Bool { if case .signedIn = self { true } else { false } }
}

extension SignInProblem {
    var isWrongCode: Bool { if case .wrongCode = self { true } else { false } }
}

extension SignInModel.Phase {
    var isSignedIn: Bool { if case .signedIn = self { true } else { false } }
}

/// A flag a test's closures share on the main actor.
@MainActor final class Flag {
    var value = false
}

/// The keyboard's autofill bar: an assertion request that waits until the test picks the
/// passkey (answered by the virtual authenticator) or ends the request unpicked.
actor AutofillBar: PasskeyAsserting {
    private let passkeys: VirtualPasskeys
    private var waiting: CheckedContinuation<Bool, Never>?

    init(_ passkeys: VirtualPasskeys) { self.passkeys = passkeys }

    func assertion(for options: PasskeyRequestOptions) async throws -> AuthenticationCredential {
        let picked = await withCheckedContinuation { waiting = $0 }
        guard picked else { throw PasskeyCancelled() }
        return try await passkeys.assertion(for: options)
    }

    /// Waits (up to 10 s) until a request waits in the bar.
    func waitUntilAsked() async throws {
        for _ in 0..<500 where waiting == nil { try await Task.sleep(for: .milliseconds(20)) }
        if waiting == nil { Issue.record("no autofill request came") }
    }

    /// The person picks the passkey, or the request ends unpicked.
    func answer(picked: Bool) {
        waiting?.resume(returning: picked)
        waiting = nil
    }
}
