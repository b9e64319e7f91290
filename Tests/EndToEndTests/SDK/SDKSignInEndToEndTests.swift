import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's sign-in state machine and session manager against the built server, on SQLite and
/// PostgreSQL: every failure a state, the fallback chain down to recovery, the session kept and
/// refreshed, a passkey from the virtual device as the second factor.
@Suite struct SDKSignInEndToEndTests {
    /// "Remember this device": the token the second step answers is kept, and the next password
    /// sign-in of the account (by username or email, in any case) skips the second step.
    @Test func aRememberedDeviceSkipsTheSecondStepNextTime() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk-remember")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let client = server.client
        let (secret, _) = try await SDKAccounts.accountWithTOTP(client, "ray")
        let remembered = MemoryRememberedDevices()
        let session = SessionManager(client: client, store: MemoryTokenStore())
        let flow = SignInFlow(client: client, session: session, rememberedDevices: remembered)
        #expect(flow.canRememberDevice)
        guard case .secondFactor = await flow.signIn("ray", password: TestAccounts.password) else {
            Issue.record("no second step: \(await flow.state)")
            return
        }
        let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
        guard case .signedIn = await flow.submit(code: code, rememberDevice: true) else {
            Issue.record("the code did not sign in: \(await flow.state)")
            return
        }
        let token = try #require(await remembered.token(for: "ray", at: client.origin))
        #expect(await remembered.token(for: "RAY@example.com", at: client.origin) == token)
        // Filed under this server: another server is never sent it.
        #expect(await remembered.token(for: "ray", at: "http://127.0.0.1:1") == nil)
        await session.signOut()

        let again = SignInFlow(client: client, session: session, rememberedDevices: remembered)
        guard case .signedIn(let user) = await again.signIn("Ray@Example.com", password: TestAccounts.password)
        else {
            Issue.record("the remembered device was asked for a second factor: \(await again.state)")
            return
        }
        #expect(user.username == "ray")
        // Every sign-in's device token is kept beside it, and sent with the account's next
        // password sign-in (`X-Device-Token`), which the server then counts against this device.
        let device = try #require(await remembered.token(for: "ray", at: SignInFlow.deviceTokens(client.origin)))
        let recording = RecordingTransport()
        let watched = APIClient(baseURL: server.baseURL, transport: recording)
        await session.signOut()
        _ = await SignInFlow(client: watched, session: session, rememberedDevices: remembered)
            .signIn("ray", password: TestAccounts.password)
        let sent = recording.headers.first { $0[Wire.Header.deviceToken] != nil }?[Wire.Header.deviceToken]
        #expect(sent != nil && sent != "", "the device token went with the sign-in")
        #expect(await remembered.token(for: "ray", at: SignInFlow.deviceTokens(client.origin)) != device, "a new one")
        // Another device (no token kept) is asked for the second factor.
        let elsewhere = SignInFlow(client: client, session: SessionManager(client: client, store: MemoryTokenStore()))
        #expect(!elsewhere.canRememberDevice)
        guard case .secondFactor = await elsewhere.signIn("ray", password: TestAccounts.password) else {
            Issue.record("a device without the token skipped the second step: \(await elsewhere.state)")
            return
        }
    }

    @Test(arguments: ["sqlite", "postgres"])
    func codesFallbackAndSessionThroughTheSDK(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await ResetDatabase.run(server)
        let client = server.client
        let (secret, backupCodes) = try await SDKAccounts.accountWithTOTP(client, "sam")

        let store = MemoryTokenStore()
        let session = SessionManager(client: client, store: store)
        #expect(await session.restore() == .signedOut)
        let flow = SignInFlow(client: client, session: session)

        #expect(await flow.signIn("sam", password: "not the password") == .credentials(.invalidCredentials))

        // The password, then the authenticator app: the methods offered, in the chain's order.
        guard case .secondFactor(let step) = await flow.signIn("sam@example.com", password: TestAccounts.password)
        else {
            Issue.record("no second step: \(await flow.state)")
            return
        }
        #expect(step.method == .totp && step.methods == [.totp, .backup])

        // A wrong code is a state with the tries left.
        guard case .secondFactor(let wrong) = await flow.submit(code: try SDKAccounts.wrongCode(secret)) else {
            Issue.record("a wrong code left the second step: \(await flow.state)")
            return
        }
        #expect(wrong.problem == .wrongCode(attemptsRemaining: 4) && wrong.attemptsRemaining == 4)

        // Falling back: the backup code, then recovery.
        guard case .secondFactor(let backup) = await flow.fallBack() else {
            Issue.record("no fallback: \(await flow.state)")
            return
        }
        #expect(backup.method == .backup && backup.problem == nil)
        #expect(await flow.fallBack() == .recovery)

        // Again, with the next step's code (the confirming code's step is used).
        await flow.restart()
        _ = await flow.signIn("sam", password: TestAccounts.password)
        let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
        guard case .signedIn(let user) = await flow.submit(code: code) else {
            Issue.record("the right code did not sign in: \(await flow.state)")
            return
        }
        #expect(user.username == "sam")
        #expect(await session.state == .signedIn(user))
        #expect(await store.session?.user == user, "the session is stored")
        let token = try await session.accessToken()
        #expect(try await client.send(API.Account.show, bearer: token).username == "sam")

        // A second client restores the stored session with no sign-in, and refreshes it.
        let restored = SessionManager(client: client, store: store)
        #expect(await restored.restore() == .signedIn(user))
        let refreshed = try await restored.refresh()
        let before = await session.session?.refreshToken.token
        #expect(refreshed.refreshToken.token != before)
        #expect(try await client.send(API.Account.show, bearer: refreshed.accessToken.token).username == "sam")
        // The first client's refresh token was rotated away: its refresh is refused, so it signs out.
        await #expect(throws: SessionError.signedOut) { _ = try await session.refresh() }
        #expect(await session.state == .signedOut)

        // A backup code, chosen from the start.
        _ = await flow.signIn("sam", password: TestAccounts.password)
        _ = await flow.choose(.backup)
        guard case .signedIn = await flow.submit(code: backupCodes[0]) else {
            Issue.record("a backup code did not sign in: \(await flow.state)")
            return
        }
        // The same backup code again, at once, signs nothing in: the server takes it for a
        // duplicate of the sign-in it just made. The step says so and goes on: another code
        // signs in on the same flow.
        _ = await flow.signIn("sam", password: TestAccounts.password)
        _ = await flow.choose(.backup)
        guard case .secondFactor(let reused) = await flow.submit(code: backupCodes[0]) else {
            Issue.record("a used backup code ended the step: \(await flow.state)")
            return
        }
        #expect(reused.problem == .alreadyUsed && reused.method == .backup)
        let flowID = try #require(await flow.pending?.flow)
        guard case .signedIn = await flow.submit(code: backupCodes[1]) else {
            Issue.record("another backup code did not sign in: \(await flow.state)")
            return
        }
        // A flow completed is over, and its refusal names the flow (which the SDK reads as
        // "start again"), unlike a used code's.
        do {
            _ = try await server.client.send(
                API.SecondStep.verifyLogin,
                MFAVerifyLoginRequest(code: backupCodes[2], method: .backup, otpFlowId: flowID))
            Issue.record("a completed flow signed in again")
        } catch let error as APIError {
            #expect(error.code == .alreadyUsed && error.problem?.errors?["otpFlowId"] != nil, "\(error)")
        }

        // Signing out ends the session on the server too.
        let last = try await session.accessToken()
        await session.signOut()
        let stateAfter = await session.state
        let storedAfter = await store.session
        #expect(stateAfter == .signedOut && storedAfter == nil)
        do {
            _ = try await client.send(API.Account.show, bearer: last)
            Issue.record("a signed-out session still works")
        } catch let error as APIError {
            #expect(error.status == 401)
        }
    }

    /// SMS codes through the SDK: the primary method's code goes out with the password, a resend
    /// inside the cooldown is a state that says when, and after it a new code signs in.
    @Test(arguments: ["sqlite", "postgres"])
    func smsCodesWithResendAndItsCooldown(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        let name = "sue-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try await TestServers.withTarget(
            environment: environment.merging(["TWOFOLD_CODE_RESEND_SECONDS": "10"]) { $1 }
        ) { target in
            let phone = "+14155550177"
            let token = try await target.register(name)
            try await target.enableSMS(token, phone: phone)
            let flow = SignInFlow(
                client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()))
            let before = try target.gateway.messages().count
            guard case .secondFactor(let step) = await flow.signIn(name, password: TestAccounts.password) else {
                Issue.record("no second step: \(await flow.state)")
                return
            }
            #expect(step.method == .sms && step.codeSentTo?.hasSuffix("77") == true && step.codeSentTo != phone)

            // At once: too soon (the cooldown passes only when the test moves the server's clock),
            // and the step says when another may go.
            guard case .secondFactor(let early) = await flow.resend() else {
                Issue.record("a resend left the step: \(await flow.state)")
                return
            }
            guard case .rateLimited = early.problem else {
                Issue.record("a resend inside the cooldown: \(String(describing: early.problem))")
                return
            }
            #expect((early.resendAvailableAt ?? .distantPast) > Date())
            let first = try #require(try await target.gateway.nextMessage(after: before)?.code)

            // After the cooldown: a new code, which signs in (the first one still would too).
            try target.server.advanceClock(by: 10.5)
            let count = try target.gateway.messages().count
            guard case .secondFactor(let resent) = await flow.resend() else {
                Issue.record("a resend left the step: \(await flow.state)")
                return
            }
            #expect(resent.problem == nil && resent.resendAvailableAt != nil)
            let second = try #require(try await target.gateway.nextMessage(after: count)?.code)
            #expect(!first.isEmpty)
            guard case .signedIn(let user) = await flow.submit(code: second) else {
                Issue.record("the resent code did not sign in: \(await flow.state)")
                return
            }
            #expect(user.username == name)
        }
    }

    /// The server sends a code at sign-in only for the account's primary method. When that is a
    /// device key this client holds no key for, the SDK's step is the SMS code: it must ask for
    /// that code itself, and say it went only once it did.
    @Test(arguments: ["sqlite", "postgres"])
    func aKeyPrimaryAccountOnAnotherClientGetsItsSMSCode(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        let name = "kay-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try await TestServers.withTarget(environment: environment) { target in
            let token = try await target.register(name)
            try await target.enableSMS(token, phone: "+14155550178")
            // Signed in with the SMS code: a session that proved a second factor enrols the key.
            let enrolling = SessionManager(client: target.client, store: MemoryTokenStore())
            let first = SignInFlow(client: target.client, session: enrolling)
            var before = try target.gateway.messages().count
            guard case .secondFactor(let sms) = await first.signIn(name, password: TestAccounts.password),
                sms.method == .sms
            else {
                Issue.record("no SMS step: \(await first.state)")
                return
            }
            let code = try #require(try await target.gateway.nextMessage(after: before)?.code)
            guard case .signedIn = await first.submit(code: code) else {
                Issue.record("the SMS code did not sign in: \(await first.state)")
                return
            }
            let keys = DeviceKeyFlows(session: enrolling, device: VirtualPhone(), deviceID: "sdk-phone-2")
            #expect(try await keys.enroll(username: name) == .enrolled(.biometric))

            // On the phone with the key (found for the username typed), the key is the step and
            // no code is said to have gone.
            let onPhone = SignInFlow(
                client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()),
                deviceKeys: keys)
            guard case .secondFactor(let keyStep) = await onPhone.signIn(name, password: TestAccounts.password)
            else {
                Issue.record("no second step on the phone: \(await onPhone.state)")
                return
            }
            #expect(keyStep.method == .deviceKey && keyStep.codeSentTo == nil, "\(keyStep)")

            // Another client: the server sent nothing (its primary is the key). What the key
            // proves comes first there too: approving on the phone (issue Z); the SMS code is
            // one choice away, and choosing it sends it.
            before = try target.gateway.messages().count
            let elsewhere = SignInFlow(
                client: target.client, session: SessionManager(client: target.client, store: MemoryTokenStore()))
            guard case .secondFactor(let offered) = await elsewhere.signIn(name, password: TestAccounts.password)
            else {
                Issue.record("no second step elsewhere: \(await elsewhere.state)")
                return
            }
            #expect(offered.method == .push && !offered.methods.contains(.deviceKey), "\(offered.methods)")
            #expect(offered.codeSentTo == nil, "no code went before it was asked for")
            guard case .secondFactor(let step) = await elsewhere.choose(.sms) else {
                Issue.record("SMS not chosen: \(await elsewhere.state)")
                return
            }
            #expect(step.method == .sms, "\(step.methods)")
            #expect(step.codeSentTo?.hasSuffix("78") == true, "the step does not say a code went")
            let sent = try #require(
                try await target.gateway.nextMessage(after: before)?.code, "the step's SMS code never went")
            guard case .signedIn(let user) = await elsewhere.submit(code: sent) else {
                Issue.record("the SMS code did not sign in: \(await elsewhere.state)")
                return
            }
            #expect(user.username == name)
        }
    }

    @Test(arguments: ["sqlite", "postgres"])
    func wrongCodesLockTheMethodAndSayUntilWhen(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        // Accounts of their own: the PostgreSQL database is shared with other runs.
        let name = "lee-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk-lock")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        let (secret, _) = try await SDKAccounts.accountWithTOTP(server.client, name)
        let flow = SignInFlow(
            client: server.client, session: SessionManager(client: server.client, store: MemoryTokenStore()))
        _ = await flow.signIn(name, password: TestAccounts.password)
        var left: [Int?] = []
        var locked: Date?
        for _ in 0..<6 where locked == nil {
            guard case .secondFactor(let step) = await flow.submit(code: try SDKAccounts.wrongCode(secret)) else {
                Issue.record("a wrong code left the second step: \(await flow.state)")
                return
            }
            if case .locked(let until) = step.problem {
                locked = until
            } else {
                left.append(step.attemptsRemaining)
            }
        }
        #expect(left == [4, 3, 2, 1, 0] || left == [4, 3, 2, 1], "\(left)")
        let until = try #require(locked, "no lockout after \(left.count) wrong codes")
        #expect(until > Date())
        // Locked, the right code is refused too, as locked.
        let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
        guard case .secondFactor(let step) = await flow.submit(code: code) else {
            Issue.record("a locked method signed in: \(await flow.state)")
            return
        }
        #expect(step.lockedUntil != nil, "\(String(describing: step.problem))")
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aPasskeyFromTheVirtualDeviceAsTheSecondFactor(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        // Accounts of their own: the PostgreSQL database is shared with other runs.
        let name = "kim-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk-passkey")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        let client = server.client
        let passkeys = VirtualPasskeys(VirtualAuthenticator(origin: "http://localhost:\(server.port)"))
        _ = try await client.send(
            API.Auth.register,
            RegisterRequest(username: name, email: "\(name)@example.com", password: TestAccounts.password))
        let token = try await client.send(
            API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
        ).tokens.accessToken.token
        let creation = try await client.send(
            API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: token)
        _ = try await client.send(
            API.Passkeys.registerVerify,
            PasskeyRegistrationRequest(credential: try await passkeys.registration(for: creation), name: "Virtual"),
            bearer: token)

        let flow = SignInFlow(
            client: client, session: SessionManager(client: client, store: MemoryTokenStore()), passkeys: passkeys)
        guard case .secondFactor(let step) = await flow.signIn(name, password: TestAccounts.password) else {
            Issue.record("no second step: \(await flow.state)")
            return
        }
        #expect(step.method == .webauthn && step.methods == [.webauthn, .backup])
        // Cancelling the prompt is a state, and the same flow can try again.
        await passkeys.setCancels(true)
        guard case .secondFactor(let cancelled) = await flow.usePasskey() else {
            Issue.record("a cancelled prompt: \(await flow.state)")
            return
        }
        #expect(cancelled.problem == .cancelled)
        await passkeys.setCancels(false)
        guard case .signedIn(let user) = await flow.usePasskey() else {
            Issue.record("the passkey did not sign in: \(await flow.state)")
            return
        }
        #expect(user.username == name)
        #expect(await flow.passkeyName == "Virtual", "the SDK says which passkey signed in")

        // Without a passkey provider, the SDK does not offer passkeys.
        let plain = SignInFlow(client: client, session: SessionManager(client: client, store: MemoryTokenStore()))
        guard case .secondFactor(let codesOnly) = await plain.signIn(name, password: TestAccounts.password)
        else {
            Issue.record("no second step: \(await plain.state)")
            return
        }
        #expect(codesOnly.methods == [.backup] && codesOnly.method == .backup)
    }

    /// Seed 004's key as the second factor after the password: offered only with a signer, a
    /// locked-out or cancelled prompt is a problem on the step (not a sign-out), and the key
    /// signs in once the prompt works.
    @Test(arguments: ["sqlite", "postgres"])
    func aDeviceKeyAsTheSecondFactor(_ database: String) async throws {
        guard let environment = CodeSignIns.databaseEnvironment(database) else { return }
        // Accounts of their own: the PostgreSQL database is shared with other runs.
        let name = "dee-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk-device-key")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        let client = server.client
        _ = try await client.send(
            API.Auth.register,
            RegisterRequest(username: name, email: "\(name)@example.com", password: TestAccounts.password))
        let enrolling = SessionManager(client: client, store: MemoryTokenStore())
        await enrolling.signedIn(
            try await client.send(API.Auth.login, LoginRequest(username: name, password: TestAccounts.password))
                .tokens)
        let phone = VirtualPhone()
        let keys = DeviceKeyFlows(session: enrolling, device: phone, deviceID: "sdk-phone-1")
        #expect(try await keys.enroll(username: name) == .enrolled(.biometric))

        let flow = SignInFlow(
            client: client, session: SessionManager(client: client, store: MemoryTokenStore()),
            deviceKey: keys.signer(username: name))
        guard case .secondFactor(let step) = await flow.signIn(name, password: TestAccounts.password) else {
            Issue.record("no second step: \(await flow.state)")
            return
        }
        #expect(step.method == .deviceKey && step.methods.first == .deviceKey, "\(step.methods)")
        await phone.lockOutBiometry()
        guard case .secondFactor(let lockedOut) = await flow.useDeviceKey() else {
            Issue.record("a locked-out prompt: \(await flow.state)")
            return
        }
        #expect(lockedOut.problem == .deviceKey(.biometryLockout))
        await phone.lockOutBiometry(false)
        await phone.cancelNextPrompt()
        guard case .secondFactor(let cancelled) = await flow.useDeviceKey() else {
            Issue.record("a cancelled prompt: \(await flow.state)")
            return
        }
        #expect(cancelled.problem == .cancelled)
        guard case .signedIn(let user) = await flow.useDeviceKey() else {
            Issue.record("the key did not sign in: \(await flow.state)")
            return
        }
        #expect(user.username == name)

        // Without a signer, the SDK does not offer the device key; with no other factor, what is
        // left is approving on the phone that holds it (issue Z), and after that recovery.
        let plain = SignInFlow(client: client, session: SessionManager(client: client, store: MemoryTokenStore()))
        guard case .secondFactor(let elsewhere) = await plain.signIn(name, password: TestAccounts.password) else {
            Issue.record("no second step without the key: \(await plain.state)")
            return
        }
        #expect(elsewhere.methods == [.push] && elsewhere.method == .push)
        #expect(await plain.fallBack() == .recovery)
    }
}

/// A transport that sends on the real one and keeps each request's headers.
final class RecordingTransport: Transport, @unchecked Sendable {
    // Safe: `seen` is read and written under `lock` only.
    private let lock = NSLock()
    private let real = URLSessionTransport()
    private var seen: [[String: String]] = []

    var headers: [[String: String]] { lock.withLock { seen } }

    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        lock.withLock { seen.append(request.allHTTPHeaderFields ?? [:]) }
        return try await real.send(request)
    }
}
