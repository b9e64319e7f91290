import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// Seed 001's device second-factor flows on the SDK against the built server: each emits the
/// seed's state sequence, refuses a common PIN and two PINs that differ as states, ends an add
/// whose biometric prompt is declined (seed 001's cancel), and ends in a blocked PIN after three
/// wrong ones.
@Suite struct DeviceSecondFactorFlowTests {
    static func pin(_ digits: String) -> PIN {
        let pin = PIN(requiredLength: digits.count)
        for digit in digits { pin.pushDigit(digit.wholeNumberValue ?? -1) }
        return pin
    }

    @Test func setPINAddBiometricsChangeAndRemoveThemAndABlockedPIN() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sdk-device-factor")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let client = server.client
        let session = try await SDKAccounts.signedIn(client, "pia")
        let phone = VirtualPhone()
        let keys = DeviceKeyFlows(session: session, device: phone, deviceID: "pia-phone")
        #expect(try await keys.enroll(username: "pia", protection: .passcode) == .enrolled(.passcode))
        func flow(_ kind: DeviceSecondFactorFlow.Kind) -> DeviceSecondFactorFlow {
            DeviceSecondFactorFlow(
                kind, session: session, device: phone, deviceID: "pia-phone", biometricKeyTag: "pia-biometrics")
        }
        let setPIN = SecondFactorInteraction(kind: .setSecondFactor, factors: [.pin])

        // Set the PIN: asked twice; a common PIN and two that differ are asked again.
        let first = flow(.setPIN)
        #expect(await first.start() == .waitForInput(setPIN))
        var refused = setPIN
        refused.problem = .commonPIN
        #expect(await first.enter(pin: Self.pin("1234"), confirmation: Self.pin("1234")) == .waitForInput(refused))
        refused.problem = .pinsDiffer
        #expect(await first.enter(pin: Self.pin("739154"), confirmation: Self.pin("739155")) == .waitForInput(refused))
        guard case .done(let withPIN) = await first.enter(pin: Self.pin("739154"), confirmation: Self.pin("739154"))
        else {
            Issue.record("the PIN was not set: \(await first.state)")
            return
        }
        #expect(withPIN.hasPin && !withPIN.hasBiometrics)

        // Declining the biometric prompt while adding biometrics cancels the add (seed 001's
        // sfCancel): the flow ends and the server has no biometrics.
        let declined = flow(.addBiometrics)
        await declined.start()
        _ = await declined.enter(pin: Self.pin("739154"))
        await phone.cancelNextPrompt()
        #expect(await declined.useBiometrics() == .failed(.cancelled))
        #expect(await declined.useBiometrics() == .failed(.cancelled), "an ended flow stays ended")

        // Add biometrics: the seed's sequence, watched as an app watches it.
        let add = flow(.addBiometrics)
        let watched = Task {
            var seen: [SecondFactorFlowState] = []
            for await state in await add.states() {
                seen.append(state)
                if case .done = state { break }
            }
            return seen
        }
        await add.start()
        var verifyPIN = SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin])
        verifyPIN.problem = .wrongPIN(attemptsRemaining: 2)
        #expect(await add.enter(pin: Self.pin("000000")) == .waitForInput(verifyPIN))
        #expect(
            await add.enter(pin: Self.pin("739154"))
                == .waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.biometrics])))
        guard case .done(let withBiometrics) = await add.useBiometrics() else {
            Issue.record("biometrics were not added: \(await add.state)")
            return
        }
        #expect(withBiometrics.hasBiometrics && withBiometrics.pinAttemptsRemaining == 3)
        // Seed 001's ADD_BIOMETRICS updates, once the flow has read the device: the refused
        // inputs (asked again with a problem) and repeated states aside.
        let sequence = await watched.value
            .filter { if case .waitForInput(let asked) = $0 { asked.problem == nil } else { true } }
            .reduce(into: [SecondFactorFlowState]()) { if $0.last != $1 { $0.append($1) } }
            .drop { $0 == .processing }
        #expect(
            Array(sequence) == [
                .waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin])), .processing,
                .waitForInput(SecondFactorInteraction(kind: .setSecondFactor, factors: [.biometrics])), .processing,
                .done(withBiometrics),
            ], "\(sequence)")

        // Change the PIN with biometrics as the proof.
        let change = flow(.changePIN)
        #expect(
            await change.start()
                == .waitForInput(SecondFactorInteraction(kind: .verifySecondFactor, factors: [.pin, .biometrics])))
        #expect(await change.useBiometrics() == .waitForInput(setPIN))
        guard case .done = await change.enter(pin: Self.pin("580264"), confirmation: Self.pin("580264")) else {
            Issue.record("the PIN was not changed: \(await change.state)")
            return
        }
        // The old PIN no longer works; the new one does, and removes biometrics.
        let remove = flow(.removeBiometrics)
        await remove.start()
        guard case .waitForInput(let stale) = await remove.enter(pin: Self.pin("739154")) else {
            Issue.record("the old PIN: \(await remove.state)")
            return
        }
        #expect(stale.problem == .wrongPIN(attemptsRemaining: 2))
        guard case .done(let without) = await remove.enter(pin: Self.pin("580264")) else {
            Issue.record("biometrics were not removed: \(await remove.state)")
            return
        }
        #expect(!without.hasBiometrics)
        #expect(await phone.hasKey(tag: "pia-biometrics") == false)

        // Three wrong PINs in a row block it: the flow ends there, and a new one does not start.
        let blocked = flow(.changePIN)
        await blocked.start()
        _ = await blocked.enter(pin: Self.pin("111999"))
        _ = await blocked.enter(pin: Self.pin("222888"))
        #expect(await blocked.enter(pin: Self.pin("333777")) == .failed(.pinBlocked))
        #expect(await flow(.addBiometrics).start() == .failed(.pinBlocked))
    }

    /// Seed 001's "biometrics changed": a face added in Settings invalidates the biometric key
    /// (`.biometryCurrentSet`); the app's check at launch finds it, tells the server, which turns
    /// the biometric factor off, and deletes the key. A second check finds nothing to report.
    @Test func aChangedBiometricSetIsReportedOnce() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-biometric-change")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let client = server.client
        let session = try await SDKAccounts.signedIn(client, "bea")
        let phone = VirtualPhone()
        #expect(
            try await DeviceKeyFlows(session: session, device: phone, deviceID: "bea-phone")
                .enroll(username: "bea", protection: .passcode) == .enrolled(.passcode))
        func flow(_ kind: DeviceSecondFactorFlow.Kind) -> DeviceSecondFactorFlow {
            DeviceSecondFactorFlow(
                kind, session: session, device: phone, deviceID: "bea-phone", biometricKeyTag: "bea-biometrics")
        }
        let setPIN = flow(.setPIN)
        await setPIN.start()
        _ = await setPIN.enter(pin: Self.pin("739154"), confirmation: Self.pin("739154"))
        let add = flow(.addBiometrics)
        await add.start()
        _ = await add.enter(pin: Self.pin("739154"))
        guard case .done(let added) = await add.useBiometrics(), added.hasBiometrics else {
            Issue.record("biometrics were not added: \(await add.state)")
            return
        }
        let check = BiometricChangeCheck(
            session: session, device: phone, deviceID: "bea-phone", biometricKeyTag: "bea-biometrics")
        #expect(try await check.check() == .unchanged, "nothing changed yet")

        await phone.changeBiometricSet()
        #expect(try await check.check() == .reported(hasPin: true, hasBiometrics: false))
        #expect(await phone.hasKey(tag: "bea-biometrics") == false)
        #expect(try await check.check() == .unchanged, "reported once")
        let status = try await client.send(
            API.DeviceFactors.status, "bea-phone", bearer: try await session.accessToken())
        #expect(status.hasPin && !status.hasBiometrics)
    }
}
