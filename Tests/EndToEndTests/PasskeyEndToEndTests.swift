import Foundation
import Testing
import TwofoldAPI
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Passkeys over HTTP against the built binary, with payloads made by independent software
/// authenticators (`scripts/soft_authenticator.py`: python-fido2 for ES256, RS256 and EdDSA with
/// `none` and `packed` attestation, and soft-webauthn): registration, then the second step,
/// passwordless sign-in and step-up.
@Suite struct PasskeyEndToEndTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let library: String
        let alg: String
        let format: String
        /// soft-webauthn sets user presence only: no passwordless sign-in.
        var verifiesUser: Bool { library == "fido2" }
        var testDescription: String { "\(library) \(alg) \(format)" }
    }

    static let cases: [Case] =
        ["ES256", "RS256", "EdDSA"].flatMap { alg in
            ["none", "packed"].map { Case(library: "fido2", alg: alg, format: $0) }
        } + [Case(library: "soft-webauthn", alg: "ES256", format: "none")]

    /// The authenticator: one credential, its key and counter in a state file.
    struct Authenticator {
        let python: ExternalTool
        let directory: URL
        let origin: String
        var state: String { directory.appendingPathComponent("state.json").path }

        func run(_ command: String, options: Data, _ extra: [String] = []) throws -> Data {
            let file = directory.appendingPathComponent("options-\(UUID().uuidString).json")
            try options.write(to: file)
            let script = BuildProducts.repositoryRoot.appendingPathComponent("scripts/soft_authenticator.py").path
            let output = try python.run(
                [script, command, "--state", state, "--options", file.path, "--origin", origin] + extra)
            #expect(output.status == 0, "\(output.errorText)")
            return output.standardOutput
        }
    }

    static func post(_ server: ServerProcess, _ path: String, _ body: Data?, bearer: String? = nil) async throws
        -> HTTP.Response
    {
        var request = HTTP.request(
            "POST", server.baseURL.appendingPathComponent(path), body: body,
            contentType: body == nil ? nil : Wire.json)
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: Wire.Header.authorization) }
        return try await HTTP.send(request)
    }

    /// `{ key: <the authenticator's JSON> }` plus string members.
    static func wrap(_ credential: Data, as key: String = "credential", _ members: [String: String] = [:]) throws
        -> Data
    {
        var object: [String: Any] = members
        object[key] = try JSONSerialization.jsonObject(with: credential)
        return try JSONSerialization.data(withJSONObject: object)
    }

    static func methods(_ server: ServerProcess, token: String) async throws -> [String]? {
        let answer = try await CodeDeliveryEndToEndTests.call(
            server, "GET", API.Auth.sessions.path(), nil, bearer: token)
        return try HTTP.decoder.decode(SessionsResponse.self, from: answer.body).sessions.first { $0.current }?.methods
    }

    @Test(arguments: cases)
    func registerThenSecondStepPasswordlessAndStepUp(_ testCase: Case) async throws {
        guard let python = TestPython.find() else { return }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-passkeys")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let authenticator = Authenticator(python: python, directory: root, origin: "http://localhost:\(server.port)")

        // An account, signed in with its password.
        let registered = try await CodeDeliveryEndToEndTests.call(
            server, "POST", API.Auth.register.path(),
            ["username": "pat", "email": "pat@example.com", "password": "correct horse battery staple"])
        #expect(registered.status == 201, "\(registered.text)")
        let login = try await CodeDeliveryEndToEndTests.call(
            server, "POST", API.Auth.login.path(), ["username": "pat", "password": "correct horse battery staple"])
        let tokens = try HTTP.decoder.decode(AuthTokensResponse.self, from: login.body)

        // Registration.
        let creation = try await Self.post(
            server, API.Passkeys.registerOptions.path(), nil, bearer: tokens.accessToken.token)
        #expect(creation.status == 200, "\(creation.text)")
        let created = try authenticator.run(
            "create", options: creation.body,
            ["--library", testCase.library, "--alg", testCase.alg, "--format", testCase.format])
        let verify = try await Self.post(
            server, API.Passkeys.registerVerify.path(), try Self.wrap(created, ["name": "Test key"]),
            bearer: tokens.accessToken.token)
        #expect(verify.status == 200, "\(verify.text)")
        let passkey = try HTTP.decoder.decode(PasskeyRegisteredResponse.self, from: verify.body)
        #expect(passkey.credential.attestationFormat == testCase.format)
        #expect(passkey.credential.attestation == (testCase.format == "packed" ? "self" : "none"))
        #expect(passkey.backupCodes?.count == 10)

        // The second step after the password.
        let flowAnswer = try await CodeDeliveryEndToEndTests.call(
            server, "POST", API.Auth.login.path(), ["username": "pat", "password": "correct horse battery staple"])
        let flow = try HTTP.decoder.decode(LoginChallengeResponse.self, from: flowAnswer.body)
        #expect(flow.availableMethods.first == .webauthn)
        let request = try await Self.post(
            server, API.Passkeys.flowOptions.path(),
            try JSONSerialization.data(withJSONObject: ["tempToken": flow.tempToken]))
        #expect(request.status == 200, "\(request.text)")
        let assertion = try authenticator.run("get", options: request.body)
        let secondStep = try await Self.post(
            server, API.Passkeys.flowVerify.path(), try Self.wrap(assertion, ["tempToken": flow.tempToken]))
        #expect(secondStep.status == 200, "\(secondStep.text)")
        let session = try HTTP.decoder.decode(SecondStepResponse.self, from: secondStep.body)
        #expect(try await Self.methods(server, token: session.accessToken.token) == ["pwd", "hwk", "mfa"])

        // Step-up with the passkey, from the session the passkey signed in.
        let stepUpOptions = try await Self.post(
            server, API.Auth.stepUpPasskeyOptions.path(), nil, bearer: session.accessToken.token)
        let stepUpAssertion = try authenticator.run("get", options: stepUpOptions.body)
        let stepUp = try await Self.post(
            server, API.Auth.stepUp.path(), try Self.wrap(stepUpAssertion, ["method": "webauthn"]),
            bearer: session.accessToken.token)
        #expect(stepUp.status == 200, "\(stepUp.text)")

        // Passwordless: no username, no password.
        let signInOptions = try await Self.post(server, API.Passkeys.signInOptions.path(), nil)
        let options = try HTTP.decoder.decode(PasskeyRequestOptions.self, from: signInOptions.body)
        #expect(options.allowCredentials.isEmpty && options.userVerification == "required")
        let signInAssertion = try authenticator.run("get", options: signInOptions.body)
        let signIn = try await Self.post(server, API.Passkeys.signInVerify.path(), try Self.wrap(signInAssertion))
        if testCase.verifiesUser {
            #expect(signIn.status == 200, "\(signIn.text)")
            let signedIn = try HTTP.decoder.decode(AuthTokensResponse.self, from: signIn.body)
            #expect(signedIn.user.username == "pat")
            #expect(try await Self.methods(server, token: signedIn.accessToken.token) == ["hwk", "mfa"])
        } else {
            #expect(signIn.status == 422 && signIn.text.contains("user_not_verified"), "\(signIn.text)")
        }
        // The same assertion again is a replay.
        let replay = try await Self.post(server, API.Passkeys.signInVerify.path(), try Self.wrap(signInAssertion))
        #expect([409, 422].contains(replay.status), "\(replay.text)")
    }
}
