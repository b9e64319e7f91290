import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Access tokens checked by an independent verifier (PyJWT) against the published JWKS.
@Suite(.serialized) struct TokenVerificationTests {
    /// The virtualenv's Python with PyJWT (`scripts/test` makes it), or `nil` after recording why.
    static func python() -> ExternalTool? { TestPython.find() }

    static func verify(_ token: String, on server: ServerProcess, later: Int? = nil) throws -> ExternalTool.Output? {
        guard let python = python() else { return nil }
        let script = BuildProducts.repositoryRoot.appendingPathComponent("scripts/verify_jwt.py").path
        var arguments = [
            script, server.baseURL.appendingPathComponent(API.Operations.jwks.path()).absoluteString, token,
        ]
        if let later { arguments += ["--later", String(later)] }
        return try python.run(arguments)
    }

    /// Registers `name` (unless an earlier call did) and signs in with the password alone.
    static func signIn(_ server: ServerProcess, as name: String) async throws -> AuthTokensResponse {
        let client = server.client
        do {
            _ = try await client.send(
                API.Auth.register,
                RegisterRequest(username: name, email: "\(name)@example.com", password: AuthEndToEndTests.password))
        } catch let error as APIError where error.status == 409 {
            // Registered by an earlier call: sign that account in.
        }
        return try await client.send(
            API.Auth.login, LoginRequest(username: name, password: AuthEndToEndTests.password)
        ).tokens
    }

    @Test func pyJWTVerifiesAccessTokensUntilTheyExpire() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let tokens = try await Self.signIn(server, as: "carol")

        guard let verified = try Self.verify(tokens.accessToken.token, on: server) else { return }
        #expect(verified.status == 0, "\(verified.errorText)")
        let claims = try JSONSerialization.jsonObject(with: verified.standardOutput) as? [String: Any]
        #expect(claims?["sub"] as? String == tokens.user.id.uuidString)
        #expect(claims?["amr"] as? [String] == ["pwd"])
        #expect(claims?["sid"] is String)
        #expect(claims?["auth_time"] is Int)
        #expect((claims?["exp"] as? Int).map { $0 - (claims?["iat"] as? Int ?? 0) } == 900)

        let later = try #require(try Self.verify(tokens.accessToken.token, on: server, later: 16 * 60))
        #expect(later.status == 1)
        #expect(later.errorText.contains("ExpiredSignatureError"))

        var tampered = Array(tokens.accessToken.token)
        let index =
            tokens.accessToken.token.firstIndex(of: ".").map {
                tokens.accessToken.token.distance(from: tokens.accessToken.token.startIndex, to: $0) + 5
            } ?? 5
        tampered[index] = tampered[index] == "A" ? "B" : "A"
        let forged = try #require(try Self.verify(String(tampered), on: server))
        #expect(forged.status == 1)
    }

    @Test func aRotatedOutKeyNoLongerVerifies() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let first = try await ServerProcess(dataDirectory: data)
        let tokens = try await Self.signIn(first, as: "dave")
        first.stop()
        let stolenKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(
                decoding: try Data(contentsOf: data.appendingPathComponent("signing-key.pem")), as: UTF8.self))

        // Rotate: the old key is retired but still published while its tokens may live.
        let rotate = try ExternalTool(url: BuildProducts.executable("twofold-server"))
            .run(["keys", "rotate"], environment: ["TWOFOLD_DATA_DIR": data.path, "PATH": "/usr/bin:/bin"])
        #expect(rotate.status == 0, "\(rotate.text)\(rotate.errorText)")
        let second = try await ServerProcess(dataDirectory: data)
        guard let stillValid = try Self.verify(tokens.accessToken.token, on: second) else { return }
        #expect(stillValid.status == 0, "a retired key verifies until its tokens expire: \(stillValid.errorText)")
        let fresh = try await Self.signIn(second, as: "erin")
        #expect(try #require(try Self.verify(fresh.accessToken.token, on: second)).status == 0)

        // Issue 21 item 6: whoever kept a copy of the retired private key (a backup, an old
        // disk) signs new tokens with it. The retired key on disk is public only, and the server
        // refuses a token it signed after its retirement, and any token that lives longer than
        // an access token does.
        for name in try FileManager.default.contentsOfDirectory(
            atPath: data.appendingPathComponent("retired-signing-keys").path)
        {
            let pem = try String(
                contentsOf: data.appendingPathComponent("retired-signing-keys").appendingPathComponent(name),
                encoding: .utf8)
            #expect(pem.contains("BEGIN PUBLIC KEY") && !pem.contains("PRIVATE"), "a retired key is kept public only")
        }
        let now = Int(Date().timeIntervalSince1970)
        let client = second.client
        let genuine = try await client.send(API.Account.show, bearer: tokens.accessToken.token)
        #expect(genuine.id == tokens.user.id, "the untampered token still works")
        let resignedAsIs = try Self.resign(tokens.accessToken.token, with: stolenKey) { _ in }
        let asIs = try await client.send(API.Account.show, bearer: resignedAsIs)
        #expect(asIs.id == tokens.user.id, "the forging works: the same claims signed again are accepted")
        let afterRetirement = try Self.resign(tokens.accessToken.token, with: stolenKey) { claims in
            claims["iat"] = now
            claims["exp"] = now + 30 * 86_400
        }
        let forged = await refusal { try await client.send(API.Account.show, bearer: afterRetirement) }
        #expect(forged?.status == 401, "a token signed after the key retired is refused")
        let longLived = try Self.resign(tokens.accessToken.token, with: stolenKey) { claims in
            claims["exp"] = now + 30 * 86_400
        }
        let stretched = await refusal { try await client.send(API.Account.show, bearer: longLived) }
        #expect(stretched?.status == 401, "a token living longer than 15 minutes is refused")
        second.stop()

        // Age the retired key past the token lifetime (its file name is its retirement time).
        let retired = data.appendingPathComponent("retired-signing-keys")
        for name in try FileManager.default.contentsOfDirectory(atPath: retired.path) {
            let old = "\(Int(Date().timeIntervalSince1970) - 3600)-aged.pem"
            try FileManager.default.moveItem(
                at: retired.appendingPathComponent(name), to: retired.appendingPathComponent(old))
        }
        let third = try await ServerProcess(dataDirectory: data)
        defer { third.stop() }
        let rotatedOut = try #require(try Self.verify(tokens.accessToken.token, on: third))
        #expect(rotatedOut.status == 1)
        #expect(rotatedOut.errorText.contains("no key"))
        let account = await refusal { try await third.client.send(API.Account.show, bearer: tokens.accessToken.token) }
        #expect(account?.status == 401, "the server refuses it too")
        #expect(try FileManager.default.contentsOfDirectory(atPath: retired.path).isEmpty, "the aged key was deleted")
    }

    /// `token` with its claims changed by `change` and signed again with `key` (ES256, same header).
    static func resign(
        _ token: String, with key: P256.Signing.PrivateKey, _ change: (inout [String: Any]) -> Void
    ) throws -> String {
        let parts = token.split(separator: ".").map(String.init)
        func decode(_ text: String) throws -> Data {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return try #require(Data(base64Encoded: base64))
        }
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        var claims = try #require(try JSONSerialization.jsonObject(with: try decode(parts[1])) as? [String: Any])
        change(&claims)
        let input = parts[0] + "." + encode(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + encode(signature.rawRepresentation)
    }

    @Test func adminCreateCommandMakesAnAdministrator() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let passwordFile = root.appendingPathComponent("password")
        try Data("an admin pass phrase\n".utf8).write(to: passwordFile)
        let shell = ExternalTool(url: URL(fileURLWithPath: "/bin/sh"))
        let created = try shell.run(
            [
                "-c",
                "'\(BuildProducts.executable("twofold-server").path)' admin create --username root --email root@example.com < '\(passwordFile.path)'",
            ], environment: ["TWOFOLD_DATA_DIR": data.path, "PATH": "/usr/bin:/bin"])
        #expect(created.status == 0, "\(created.text)\(created.errorText)")
        #expect(created.text.contains("Created administrator root"))
        #expect(!created.text.contains("an admin pass phrase"))

        // The administrator has an authenticator app from the start: its key is printed once,
        // and the password alone is not a sign-in.
        let key = try #require(
            created.text.split(separator: "\n").first { $0.hasPrefix("Key: ") }.map { String($0.dropFirst(5)) })
        #expect(created.text.contains("otpauth://totp/") && created.text.contains("Backup codes"))

        let server = try await ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let client = server.client
        let outcome = try await client.send(
            API.Auth.login, LoginRequest(username: "root", password: "an admin pass phrase"))
        guard case .secondStep(let challenge) = outcome else {
            Issue.record("the password alone signed the administrator in")
            return
        }
        #expect(challenge.availableMethods.contains(.totp))
        let code = try TOTP(secret: try Base32.decode(key)).code(at: Date())
        let tokens = try await client.send(
            API.SecondStep.validateTOTP, TOTPValidateRequest(tempToken: challenge.otpFlowId, code: code))
        #expect(tokens.user.role == "admin")
        _ = try await client.send(API.Admin.users, bearer: tokens.accessToken.token)
        let audit = try await client.send(
            API.Admin.audit, bearer: tokens.accessToken.token, query: AuditQuery(type: "admin.created"))
        #expect(audit.events.count == 1)

        // Without a password on standard input, one is generated and shown once.
        let generated = try shell.run(
            [
                "-c",
                "'\(BuildProducts.executable("twofold-server").path)' admin create --username ops --email ops@example.com < /dev/null",
            ], environment: ["TWOFOLD_DATA_DIR": data.path, "PATH": "/usr/bin:/bin"])
        #expect(generated.status == 0, "\(generated.errorText)")
        #expect(generated.text.contains("Password (shown once"))
    }
}
