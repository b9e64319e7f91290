import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldTestSupport

/// Seed 004's scenarios on the SDK's device flows and the virtual phone, against the built
/// server: what the phone did and what the server answered.
@Suite struct DeviceKeyFlowsEndToEndTests {
    @Test func scenariosOneTwoThreeAndSixWithAKey() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("dee")
            let phone = VirtualPhone(DeviceCapabilities.faceID)
            let session = try await DeviceKeySessions.session(target, "dee")
            let flows = DeviceKeyFlows(session: session, device: phone, deviceID: "iphone-1")

            // Scenario 2: Face ID declined; the SDK offers the passcode (nothing reached the server).
            await phone.cancelNextPrompt()
            #expect(try await flows.enroll(username: "dee", protection: .biometric) == .offerPasscode(.userCancel))
            #expect(await phone.hasKey(tag: flows.tag(for: "dee")) == false, "the declined key is not kept")
            // Scenario 3: the passcode, by choice.
            #expect(try await flows.enroll(username: "dee", protection: .passcode) == .enrolled(.passcode))
            let devices = try await target.client.send(
                API.DeviceKeys.devices, "dee", bearer: try await session.accessToken())
            #expect(devices.devices.map(\.deviceId) == ["iphone-1"], "\(devices)")

            // A new key the server refuses (this session added the device's key, so it may not
            // replace it) leaves the phone with the key the server holds.
            await #expect(throws: APIError.self) {
                _ = try await flows.upgrade(username: "dee", protection: .biometric)
            }
            #expect(await phone.hasKey(tag: flows.tag(for: "dee") + ".pending") == false)

            // Scenario 6: a signed-out app signs in with the key, behind the passcode prompt.
            let fresh = SessionManager(client: target.client, store: MemoryTokenStore())
            let signingIn = DeviceKeyFlows(session: fresh, device: phone, deviceID: "iphone-1")
            guard case .signedIn(let user) = try await signingIn.signIn(username: "dee") else {
                Issue.record("the key did not sign in")
                return
            }
            let freshState = await fresh.state
            #expect(user.username == "dee" && freshState == .signedIn(user))
            #expect(await phone.prompts.last == .passcode)
            let me = try await target.client.send(API.Account.show, bearer: try await fresh.accessToken())
            #expect(me.username == "dee")
            // A cancelled prompt offers the SMS fallback, and nothing signs in.
            await phone.cancelNextPrompt()
            #expect(try await signingIn.signIn(username: "dee") == .useSMS(.userCancel))

            // Scenario 1, on another account: Face ID; locked-out biometrics offer SMS too.
            _ = try await target.register("fay")
            let faceID = DeviceKeyFlows(
                session: try await DeviceKeySessions.session(target, "fay"), device: phone, deviceID: "iphone-1")
            #expect(try await faceID.enroll(username: "fay") == .enrolled(.biometric))
            guard case .signedIn = try await faceID.signIn(username: "fay") else {
                Issue.record("Face ID did not sign in")
                return
            }
            #expect(await phone.prompts.last == .biometric)
            await phone.lockOutBiometry()
            #expect(try await faceID.signIn(username: "fay") == .useSMS(.biometryLockout))
        }
    }

    @Test func scenariosFourAndFiveWithoutBiometricsOrSecurity() async throws {
        try await TestServers.withTarget { target in
            _ = try await target.register("eve")
            let session = try await DeviceKeySessions.session(target, "eve")

            // Scenario 4: no biometrics enrolled: biometrics are refused, the passcode enrols.
            let phone = VirtualPhone(DeviceCapabilities.biometryNotEnrolled)
            let flows = DeviceKeyFlows(session: session, device: phone, deviceID: "iphone-2")
            #expect(try await flows.enroll(username: "eve", protection: .biometric) == .failed(.biometryNotEnrolled))
            #expect(try await flows.enroll(username: "eve") == .enrolled(.passcode))

            // Scenario 5: no device security: a key is blocked (the server hears nothing), SMS is offered.
            let insecure = DeviceKeyFlows(
                session: session, device: VirtualPhone(DeviceCapabilities.noSecurity), deviceID: "iphone-3")
            #expect(try await insecure.enroll(username: "eve") == .blocked("Please set up device passcode in Settings"))
            let devices = try await target.client.send(
                API.DeviceKeys.devices, "eve", bearer: try await session.accessToken())
            #expect(devices.devices.map(\.deviceId) == ["iphone-2"])

            // Security removed after enrolment: the key is gone, the phone says so, SMS is offered.
            await phone.removeSecurity()
            let signedOut = DeviceKeyFlows(
                session: SessionManager(client: target.client, store: MemoryTokenStore()), device: phone,
                deviceID: "iphone-2")
            #expect(try await signedOut.signIn(username: "eve") == .useSMS(.passcodeNotSet))
        }
    }
}
