import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// `TwofoldDevice` against the built server, through `APIClient`: the virtual authenticator's
/// passkeys register, complete the second step and sign in without a password, and the
/// server's `excludeCredentials` keeps it from registering twice; a software device key
/// enrols and signs in as a Secure Enclave key does.
@Suite struct VirtualDeviceEndToEndTests {
    static func signIn(_ client: APIClient, _ name: String) async throws -> LoginOutcome {
        try await client.send(API.Auth.login, LoginRequest(username: name, password: TestAccounts.password))
    }

    @Test func passkeysAndADeviceKeyFromTheVirtualDevice() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-virtual")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let client = APIClient(baseURL: server.baseURL)
        var authenticator = VirtualAuthenticator(origin: "http://localhost:\(server.port)", format: "packed")

        _ = try await client.send(
            API.Auth.register,
            RegisterRequest(username: "pat", email: "pat@example.com", password: TestAccounts.password))
        guard case .signedIn(let first) = try await Self.signIn(client, "pat") else {
            Issue.record("a password-only account needs no second step")
            return
        }
        let token = first.accessToken.token

        // Registration: the server's options, the authenticator's answer, the server's check.
        let creation = try await client.send(
            API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: token)
        let registered = try await client.send(
            API.Passkeys.registerVerify,
            PasskeyRegistrationRequest(credential: try authenticator.create(creation), name: "Virtual"),
            bearer: token)
        #expect(registered.credential.attestationFormat == "packed" && registered.credential.attestation == "self")
        #expect(registered.credential.deviceBound && registered.backupCodes?.count == 10)

        // The second step after the password.
        guard case .secondStep(let flow) = try await Self.signIn(client, "pat") else {
            Issue.record("an account with a passkey signed in with its password alone")
            return
        }
        #expect(flow.availableMethods.first == .webauthn)
        let request = try await client.send(
            API.Passkeys.flowOptions, PasskeyFlowOptionsRequest(tempToken: flow.tempToken))
        let secondStep = try await client.send(
            API.Passkeys.flowVerify,
            PasskeyFlowVerifyRequest(tempToken: flow.tempToken, credential: try authenticator.get(request)))
        #expect(secondStep.user.username == "pat")

        // The server now excludes it (asked from the session the passkey proved: the one that
        // added it may not add another): the authenticator will not make a second one.
        let again = try await client.send(
            API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: secondStep.accessToken.token)
        #expect(again.excludeCredentials.map(\.id) == [registered.credential.id])
        #expect(throws: VirtualAuthenticator.Refusal.alreadyRegistered) { try authenticator.create(again) }

        // Passwordless, and a replayed assertion refused.
        let options = try await client.send(API.Passkeys.signInOptions)
        let assertion = try authenticator.get(options)
        let signedIn = try await client.send(API.Passkeys.signInVerify, PasskeySignInRequest(credential: assertion))
        #expect(signedIn.user.username == "pat")
        do {
            _ = try await client.send(API.Passkeys.signInVerify, PasskeySignInRequest(credential: assertion))
            Issue.record("a used assertion signed in again")
        } catch let error as APIError {
            #expect(error.status >= 400 && error.status < 500, "\(error)")
        }

        // A device key, enrolled from the session the passkey just proved, signs in.
        let key = SoftwareDeviceKey()
        let enrolled = try await client.send(
            API.DeviceKeys.enroll,
            DeviceEnrollRequest(
                username: "pat", publicKey: key.publicKey, method: "secureEnclave", deviceId: "iphone-1"),
            bearer: secondStep.accessToken.token)
        #expect(enrolled.success && enrolled.method == "secureEnclave")
        let challenge = try await client.send(
            API.DeviceKeys.initiate, DeviceRequest(username: "pat", deviceId: "iphone-1"))
        let device = try await client.send(
            API.DeviceKeys.verifySignature,
            VerifySignatureRequest(
                username: "pat", deviceId: "iphone-1", challengeId: challenge.challengeId,
                signature: try key.sign(challenge: challenge.challenge)))
        #expect(!device.token.isEmpty)
        // Another key's signature over the next challenge is refused.
        let next = try await client.send(API.DeviceKeys.initiate, DeviceRequest(username: "pat", deviceId: "iphone-1"))
        do {
            _ = try await client.send(
                API.DeviceKeys.verifySignature,
                VerifySignatureRequest(
                    username: "pat", deviceId: "iphone-1", challengeId: next.challengeId,
                    signature: try SoftwareDeviceKey().sign(challenge: next.challenge)))
            Issue.record("another key's signature signed in")
        } catch let error as APIError {
            #expect(error.status == 401, "\(error)")
        }
    }
}
