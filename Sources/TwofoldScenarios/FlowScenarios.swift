import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice

extension Scenarios {
    /// Seed 001: the device's PIN and biometrics as second factors, each flow's states.
    static let seed001 = Scenario(number: 11, name: "Device PIN and biometrics (seed 001)", run: devicePINAndBiometrics)

    /// Seed 000: passkey → authenticator code → backup code → recovery.
    static let seed000 = Scenario(number: 12, name: "The fallback chain (seed 000)", run: fallbackChain)

    // MARK: Seed 001

    static func pin(_ digits: String) -> PIN {
        let pin = PIN(requiredLength: digits.count)
        for digit in digits { pin.pushDigit(digit.wholeNumberValue ?? -1) }
        return pin
    }

    static func words(_ state: SecondFactorFlowState) -> String {
        switch state {
        case .processing: return "processing"
        case .done(let device):
            return "done: PIN \(device.hasPin ? "set" : "not set"), biometrics \(device.hasBiometrics ? "on" : "off")"
        case .failed(let problem): return "failed: \(problem)"
        case .waitForInput(let asked):
            let kind = asked.kind == .setSecondFactor ? "setSecondFactor" : "verifySecondFactor"
            let factors = asked.factors.map(\.rawValue).joined(separator: ", ")
            return "waitForInput(\(kind): \(factors))" + (asked.problem.map { " after \($0)" } ?? "")
        }
    }

    static func devicePINAndBiometrics(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        try await enroll(account, "enrol the device", protection: .passcode, expecting: .enrolled(.passcode))
        let log = account.log
        let biometricTag = account.tag + ".second-factor"
        func flow(_ kind: DeviceSecondFactorFlow.Kind) -> DeviceSecondFactorFlow {
            DeviceSecondFactorFlow(
                kind, session: account.session, device: account.phone, deviceID: account.deviceID,
                biometricKeyTag: biometricTag)
        }
        func server() async throws -> DeviceSecondFactorResponse {
            try await context.client.send(
                API.DeviceFactors.status, account.deviceID, bearer: try await account.session.accessToken())
        }
        func expect(_ action: String, _ state: SecondFactorFlowState, _ holds: Bool) throws {
            try log.check(action, holds, words(state))
        }
        let askToSet = SecondFactorInteraction(kind: .setSecondFactor, factors: [.pin])

        // Set the PIN: a common one and two that differ are asked again.
        let setPIN = flow(.setPIN)
        let started = await setPIN.start()
        try expect("set PIN: start", started, started == .waitForInput(askToSet))
        let common = await setPIN.enter(pin: pin("1234"), confirmation: pin("1234"))
        try expect("enter 1234 twice", common, common == .waitForInput(withProblem(askToSet, .commonPIN)))
        let differ = await setPIN.enter(pin: pin("739154"), confirmation: pin("739155"))
        try expect("enter two PINs that differ", differ, differ == .waitForInput(withProblem(askToSet, .pinsDiffer)))
        let set = await setPIN.enter(pin: pin("739154"), confirmation: pin("739154"))
        try expect("enter a PIN twice", set, set.finished?.hasPin == true)
        var device = try await server()
        try log.check("the server's device", device.hasPin && !device.hasBiometrics, "PIN \(device.hasPin)")

        // Add biometrics: verify the PIN, then the prompt makes the key.
        let add = flow(.addBiometrics)
        let verify = await add.start()
        try expect(
            "add biometrics: start", verify,
            verify == .waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin])))
        let askBiometrics = await add.enter(pin: pin("739154"))
        try expect(
            "verify with the PIN", askBiometrics,
            askBiometrics == .waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.biometrics])))
        let added = await add.useBiometrics()
        try expect("the Face ID prompt", added, added.finished?.hasBiometrics == true)
        device = try await server()
        try log.check("the server's device", device.hasBiometrics, "biometrics \(device.hasBiometrics)")

        // Change the PIN with biometrics as the proof.
        let change = flow(.changePIN)
        let proveFirst = await change.start()
        try expect(
            "change PIN: start", proveFirst,
            proveFirst
                == .waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin, .biometrics])))
        let askNew = await change.useBiometrics()
        try expect("verify with Face ID", askNew, askNew == .waitForInput(askToSet))
        let changed = await change.enter(pin: pin("580264"), confirmation: pin("580264"))
        try expect("enter the new PIN twice", changed, changed.finished != nil)

        // Remove biometrics: the old PIN is wrong now, the new one works.
        let remove = flow(.removeBiometrics)
        await remove.start()
        let stale = await remove.enter(pin: pin("739154"))
        try expect(
            "remove biometrics with the old PIN", stale,
            stale.asked?.problem == .wrongPIN(attemptsRemaining: 2))
        let removed = await remove.enter(pin: pin("580264"))
        try expect(
            "remove biometrics with the new PIN", removed,
            removed.finished?.hasBiometrics == false)
        let keyLeft = await account.phone.hasKey(tag: biometricTag)
        try log.check("the biometric key on the phone", !keyLeft, keyLeft ? "still there" : "deleted")

        // Three wrong PINs in a row block it.
        let blocked = flow(.changePIN)
        await blocked.start()
        _ = await blocked.enter(pin: pin("111999"))
        _ = await blocked.enter(pin: pin("222888"))
        let third = await blocked.enter(pin: pin("333777"))
        try expect("three wrong PINs", third, third == .failed(.pinBlocked))
        device = try await server()
        try log.check("the server's device", device.pinBlocked, "PIN blocked \(device.pinBlocked)")
    }

    static func withProblem(_ interaction: SecondFactorInteraction, _ problem: SecondFactorProblem)
        -> SecondFactorInteraction
    {
        var asked = interaction
        asked.problem = problem
        return asked
    }

    // MARK: Seed 000

    static func words(_ state: SignInState) -> String {
        switch state {
        case .credentials(let problem): "asking for the password" + (problem.map { " after \($0)" } ?? "")
        case .working: "working"
        case .secondFactor(let step):
            "second factor: \(step.method.rawValue) of \(step.methods.map(\.rawValue).joined(separator: ", "))"
                + (step.problem.map { " after \($0)" } ?? "")
        case .signedIn(let user): "signed in as \(user.username)"
        case .recovery: "recovery"
        }
    }

    static func fallbackChain(_ context: ScenarioContext) async throws {
        let account = try await context.newAccount(phone: DeviceCapabilities.faceID)
        let log = account.log
        let passkeys = VirtualPasskeys(VirtualAuthenticator(origin: context.origin))
        let security = AccountSecurity(
            session: account.session, stepUp: account.stepUp(for: account.session), passkeys: passkeys)

        // An authenticator app, its backup codes shown once, then a passkey.
        let setup = try await security.startAuthenticator()
        let totp = try TOTP(secret: try Base32.decode(setup.secret))
        let codes = try await security.confirmAuthenticator(code: try totp.code(at: Date())) ?? []
        try log.check("set up the authenticator app", codes.count == 10, "\(codes.count) backup codes shown once")
        account.proofs.keep(backupCodes: codes)
        // The app signs in again before adding more: the new factor confirms nothing in the
        // session that added it.
        let renewed = SignInFlow(client: context.client, session: account.session)
        await renewed.signIn(account.username, password: account.password)
        await renewed.choose(.backup)
        let firstBackup = try log.require("a backup code kept", account.proofs.takeBackupCode(), "one")
        let back = await renewed.submit(code: firstBackup)
        try log.check(
            "sign in again with the password and a backup code", back.isSignedIn,
            words(back))
        let passkey = try await security.addPasskey(name: "Scenario phone")
        log.record("add a passkey", "the server took \(passkey.credential.name)")
        let status = try await security.status()
        let backupsLeft = status.backupCodes.remaining
        try log.check(
            "the server's factors", status.totp.enabled && status.webauthn.credentials.count == 1,
            "authenticator \(status.totp.enabled), passkeys \(status.webauthn.credentials.count), backup codes \(backupsLeft)"
        )
        await account.session.signOut()

        // Sign in: passkey first; declined, the chain falls back to the authenticator code.
        let session = SessionManager(client: context.client, store: MemoryTokenStore())
        let signIn = SignInFlow(client: context.client, session: session, passkeys: passkeys)
        let first = await signIn.signIn(account.username, password: account.password)
        try log.check(
            "sign in with the password", first.step?.method == .webauthn,
            words(first))
        await passkeys.setCancels(true)
        let declined = await signIn.usePasskey()
        try log.check(
            "the passkey prompt, declined", declined.step?.problem == .cancelled, words(declined),
            reason: DeviceAuthFailure.userCancel.message)
        let totpStep = await signIn.fallBack()
        try log.check(
            "\"Use another method\"", totpStep.step?.method == .totp,
            words(totpStep))
        let real = try totp.code(at: Date())
        let wrong = String(real.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
        let refused = await signIn.submit(code: wrong)
        try log.check(
            "a wrong authenticator code", refused.step?.problem?.isWrongCode == true, words(refused))
        let backupStep = await signIn.fallBack()
        try log.check(
            "\"Use a backup code\"", backupStep.step?.method == .backup,
            words(backupStep))
        let backup = try log.require("a backup code kept", account.proofs.takeBackupCode(), "one left")
        let signedIn = await signIn.submit(code: backup)
        try log.check(
            "a backup code", signedIn.isSignedIn, words(signedIn))
        let after = try await context.client.send(API.TwoFactor.status, bearer: try await session.accessToken())
        try log.check(
            "the server's backup codes", after.backupCodes.remaining == backupsLeft - 1,
            "\(after.backupCodes.remaining) left")
        await session.signOut()

        // The used backup code does not work twice; with every method set aside, recovery.
        let again = SignInFlow(client: context.client, session: session, passkeys: passkeys)
        await again.signIn(account.username, password: account.password)
        await again.choose(.backup)
        let reused = await again.submit(code: backup)
        try log.check(
            "the same backup code again", reused.step?.problem == .alreadyUsed, words(reused))
        var state = reused
        for _ in 0..<SignInFlow.chain.count where state != .recovery { state = await again.fallBack() }
        try log.check("every method set aside", state == .recovery, words(state))

        // And the passkey, accepted, signs in at the head of the chain.
        await passkeys.setCancels(false)
        let third = SignInFlow(client: context.client, session: session, passkeys: passkeys)
        await third.signIn(account.username, password: account.password)
        let withPasskey = await third.usePasskey()
        try log.check(
            "the passkey prompt, accepted", withPasskey.isSignedIn,
            words(withPasskey))
    }
}

extension SignInState {
    /// The second step, when that is the state.
    var step: SecondFactorStep? { if case .secondFactor(let step) = self { step } else { nil } }
    var isSignedIn: Bool { if case .signedIn = self { true } else { false } }
}

extension SignInProblem {
    var isWrongCode: Bool { if case .wrongCode = self { true } else { false } }
}

extension SecondFactorFlowState {
    /// The device's factors, when the flow is done.
    var finished: DeviceSecondFactorResponse? { if case .done(let device) = self { device } else { nil } }
    /// What the flow asks for, when it waits for input.
    var asked: SecondFactorInteraction? { if case .waitForInput(let asked) = self { asked } else { nil } }
}
