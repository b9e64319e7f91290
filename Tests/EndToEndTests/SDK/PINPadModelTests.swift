import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldScreens
import TwofoldTestSupport

/// Seed 001's PIN pad on the virtual phone against the built server: a PIN set by typing it
/// twice (a common one and two that differ refused in words), biometrics added in the older
/// order (the prompt first), a declined prompt and Cancel ending a flow with nothing changed,
/// the PIN changed and biometrics removed. The pad shows how many digits are in, never which.
@MainActor @Suite struct PINPadModelTests {
    static func type(_ pad: PINPadModel, _ digits: String) async {
        for digit in digits { await pad.press(digit.wholeNumberValue ?? -1) }
    }

    @Test(.timeLimit(.minutes(2))) func thePadRunsSeed001sFlows() async throws {
        try await TestServers.withTarget { target in
            let session = try await SDKAccounts.signedIn(target.client, "pad")
            let phone = VirtualPhone()
            let keys = DeviceKeyFlows(session: session, device: phone, deviceID: "pad-phone")
            #expect(try await keys.enroll(username: "pad", protection: .passcode) == .enrolled(.passcode))
            @MainActor func pad(_ kind: DeviceSecondFactorFlow.Kind) -> PINPadModel {
                PINPadModel(
                    flow: DeviceSecondFactorFlow(
                        kind, session: session, device: phone, deviceID: "pad-phone", biometricKeyTag: "pad-bio"))
            }
            func status() async throws -> DeviceSecondFactorResponse {
                try await target.client.send(
                    API.DeviceFactors.status, "pad-phone", bearer: try await session.accessToken())
            }

            // Set: the dots count and the delete key takes one back; a new PIN is typed twice.
            let set = pad(.setPIN)
            await set.start()
            #expect(set.phase == .pad && set.prompt == "Choose a PIN of 6 digits" && set.title == "Set a PIN")
            await Self.type(set, "739")
            set.deleteDigit()
            #expect(set.entered == 2)
            set.deleteDigit()
            set.deleteDigit()
            await Self.type(set, "111111")
            #expect(set.prompt == "Enter the new PIN again" && set.entered == 0)
            await Self.type(set, "111111")
            #expect(set.phase == .pad && set.problem == "That PIN is too easy to guess. Choose another.")
            await Self.type(set, "739154")
            await Self.type(set, "739155")
            #expect(set.problem == "The two PINs differ. Choose a PIN and enter it twice.")
            await Self.type(set, "739154")
            await Self.type(set, "739154")
            guard case .done(let withPIN) = set.phase else {
                Issue.record("the PIN was not set: \(set.phase) \(String(describing: set.problem))")
                return
            }
            #expect(withPIN.hasPin && !withPIN.hasBiometrics)

            // Adding biometrics with the prompt first: declining the prompt ends the add.
            await phone.cancelNextPrompt()
            let declined = pad(.addBiometricsBiometricFirst)
            await declined.start()
            #expect(declined.phase == .biometrics)
            await declined.useBiometrics()
            #expect(declined.phase == .over("Cancelled. Nothing was changed."))
            #expect(try await status().hasBiometrics == false)
            let afterDecline = await phone.savedKeys()
            #expect(afterDecline["pad-bio"] == nil && afterDecline["pad-bio.pending"] == nil, "no key left behind")

            // The key made first, a wrong PIN, then Cancel: the key made is deleted.
            let abandoned = pad(.addBiometricsBiometricFirst)
            await abandoned.start()
            await abandoned.useBiometrics()
            await Self.type(abandoned, "000000")
            #expect(abandoned.problem == "That PIN is wrong. 2 tries left before it is blocked.")
            await abandoned.cancel()
            #expect(abandoned.phase == .over("Cancelled. Nothing was changed."))
            let afterAbandon = await phone.savedKeys()
            #expect(afterAbandon["pad-bio"] == nil && afterAbandon["pad-bio.pending"] == nil, "no key left behind")

            // The older order: the prompt makes the key, then the PIN lets the server take it.
            let legacy = pad(.addBiometricsBiometricFirst)
            await legacy.start()
            await legacy.useBiometrics()
            #expect(legacy.phase == .pad && legacy.prompt == "Enter your PIN")
            await Self.type(legacy, "000000")
            #expect(legacy.phase == .pad && legacy.problem == "That PIN is wrong. 1 try left before it is blocked.")
            await Self.type(legacy, "739154")
            guard case .done(let withBiometrics) = legacy.phase else {
                Issue.record("biometrics were not added: \(legacy.phase) \(String(describing: legacy.problem))")
                return
            }
            let keptKeys = await phone.savedKeys()
            #expect(withBiometrics.hasBiometrics && keptKeys["pad-bio"] != nil && keptKeys["pad-bio.pending"] == nil)
            await legacy.cancel()
            #expect(legacy.phase == .done(withBiometrics), "a finished flow is not cancelled")

            // Adding again is refused before any prompt: the working key is never replaced unasked.
            let again = pad(.addBiometrics)
            await again.start()
            #expect(again.phase == .over("This device has biometrics already. Remove them to add them again."))
            let stillKept = await phone.savedKeys()["pad-bio"]
            #expect(stillKept != nil && stillKept?.privateKey == keptKeys["pad-bio"]?.privateKey, "the same key")

            // Cancel halfway: nothing sent, nothing changed, the digits wiped.
            let change = pad(.changePIN)
            await change.start()
            #expect(change.phase == .pad && change.offersBiometrics, "biometrics may verify now")
            await Self.type(change, "739")
            await change.cancel()
            #expect(change.phase == .over("Cancelled. Nothing was changed.") && change.entered == 0)

            // Change with biometrics, then the new PIN twice.
            let changed = pad(.changePIN)
            await changed.start()
            await changed.useBiometrics()
            #expect(changed.phase == .pad && changed.prompt == "Choose a new PIN of 6 digits")
            await Self.type(changed, "580264")
            await Self.type(changed, "580264")
            guard case .done = changed.phase else {
                Issue.record("the PIN was not changed: \(changed.phase) \(String(describing: changed.problem))")
                return
            }

            // Remove biometrics with the new PIN: the phone's biometric key goes too.
            let remove = pad(.removeBiometrics)
            await remove.start()
            await Self.type(remove, "580264")
            guard case .done(let without) = remove.phase else {
                Issue.record("biometrics were not removed: \(remove.phase) \(String(describing: remove.problem))")
                return
            }
            let leftKeys = await phone.savedKeys()
            #expect(!without.hasBiometrics && leftKeys["pad-bio"] == nil)
        }
    }
}
