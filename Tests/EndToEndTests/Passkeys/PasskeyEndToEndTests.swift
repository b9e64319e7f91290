import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Passkeys over HTTP against the built binary, with payloads made by independent software
/// authenticators (`scripts/soft_authenticator.py`: python-fido2 for ES256, RS256 and EdDSA with
/// `none` and `packed` attestation, and soft-webauthn): registration, then the second step,
/// passwordless sign-in and step-up. What the authenticator reads (the options) and writes (the
/// credentials) goes as the server and it wrote them, not through `TwofoldAPI`'s types: the point
/// is that independent software reads what the server writes, and the server what it writes.
@Suite struct PasskeyEndToEndTests {
    @Test(arguments: PasskeyCeremonies.cases)
    func registerThenSecondStepPasswordlessAndStepUp(_ testCase: PasskeyCeremonies.Case) async throws {
        guard let python = TestPython.find() else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-passkeys")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let authenticator = PasskeyCeremonies.Authenticator(
            python: python, directory: root, origin: "http://localhost:\(server.port)")

        // An account, signed in with its password.
        let client = server.client
        _ = try await client.send(
            API.Auth.register,
            RegisterRequest(username: "pat", email: "pat@example.com", password: "correct horse battery staple"))
        let tokens = try await client.send(
            API.Auth.login, LoginRequest(username: "pat", password: "correct horse battery staple")
        ).tokens

        // Registration.
        let creation = try await client.exchange(
            API.Passkeys.registerOptions, PasskeyRegistrationOptionsRequest(), bearer: tokens.accessToken.token)
        #expect(creation.status == 200, "\(creation.text)")
        let created = try authenticator.run(
            "create", options: creation.body,
            ["--library", testCase.library, "--alg", testCase.alg, "--format", testCase.format])
        let verify = try await client.exchange(
            API.Passkeys.registerVerify.erased, body: try PasskeyCeremonies.wrap(created, ["name": "Test key"]),
            bearer: tokens.accessToken.token)
        let passkey = try client.read(verify, of: API.Passkeys.registerVerify)
        #expect(passkey.credential.attestationFormat == testCase.format)
        #expect(passkey.credential.attestation == (testCase.format == "packed" ? "self" : "none"))
        #expect(passkey.backupCodes?.count == 10)

        // The second step after the password.
        let flow = try await client.send(
            API.Auth.login, LoginRequest(username: "pat", password: "correct horse battery staple")
        ).challenge
        #expect(flow.availableMethods.first == .webauthn)
        let request = try await client.exchange(
            API.Passkeys.flowOptions, PasskeyFlowOptionsRequest(tempToken: flow.tempToken))
        #expect(request.status == 200, "\(request.text)")
        let assertion = try authenticator.run("get", options: request.body)
        let secondStep = try await client.exchange(
            API.Passkeys.flowVerify.erased, body: try PasskeyCeremonies.wrap(assertion, ["tempToken": flow.tempToken]))
        let session = try client.read(secondStep, of: API.Passkeys.flowVerify)
        #expect(try await PasskeyCeremonies.methods(server, token: session.accessToken.token) == ["pwd", "hwk", "mfa"])

        // Step-up with the passkey, from the session the passkey signed in.
        let stepUpOptions = try await client.exchange(API.Auth.stepUpPasskeyOptions, bearer: session.accessToken.token)
        let stepUpAssertion = try authenticator.run("get", options: stepUpOptions.body)
        let stepUp = try await client.exchange(
            API.Auth.stepUp.erased, body: try PasskeyCeremonies.wrap(stepUpAssertion, ["method": "webauthn"]),
            bearer: session.accessToken.token)
        #expect(stepUp.status == 200, "\(stepUp.text)")

        // Passwordless: no username, no password.
        let signInOptions = try await client.exchange(API.Passkeys.signInOptions)
        let options = try client.read(signInOptions, of: API.Passkeys.signInOptions)
        #expect(options.allowCredentials.isEmpty && options.userVerification == "required")
        let signInAssertion = try authenticator.run("get", options: signInOptions.body)
        let signIn = try await client.exchange(
            API.Passkeys.signInVerify.erased, body: try PasskeyCeremonies.wrap(signInAssertion))
        if testCase.verifiesUser {
            let signedIn = try client.read(signIn, of: API.Passkeys.signInVerify)
            #expect(signedIn.user.username == "pat")
            #expect(try await PasskeyCeremonies.methods(server, token: signedIn.accessToken.token) == ["hwk", "mfa"])
        } else {
            #expect(signIn.status == 422 && signIn.text.contains("user_not_verified"), "\(signIn.text)")
        }
        // The same assertion again is a replay.
        let replay = try await client.exchange(
            API.Passkeys.signInVerify.erased, body: try PasskeyCeremonies.wrap(signInAssertion))
        #expect([409, 422].contains(replay.status), "\(replay.text)")
    }
}
