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
    @Test func pyJWTVerifiesAccessTokensUntilTheyExpire() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let tokens = try await TokenChecks.signIn(server, as: "carol")

        guard let verified = try TokenChecks.verify(tokens.accessToken.token, on: server) else { return }
        #expect(verified.status == 0, "\(verified.errorText)")
        let claims = try JSONSerialization.jsonObject(with: verified.standardOutput) as? [String: Any]
        #expect(claims?["sub"] as? String == tokens.user.id.uuidString)
        #expect(claims?["amr"] as? [String] == ["pwd"])
        #expect(claims?["sid"] is String)
        #expect(claims?["auth_time"] is Int)
        #expect((claims?["exp"] as? Int).map { $0 - (claims?["iat"] as? Int ?? 0) } == 900)

        let later = try #require(try TokenChecks.verify(tokens.accessToken.token, on: server, later: 16 * 60))
        #expect(later.status == 1)
        #expect(later.errorText.contains("ExpiredSignatureError"))

        var tampered = Array(tokens.accessToken.token)
        let index =
            tokens.accessToken.token.firstIndex(of: ".").map {
                tokens.accessToken.token.distance(from: tokens.accessToken.token.startIndex, to: $0) + 5
            } ?? 5
        tampered[index] = tampered[index] == "A" ? "B" : "A"
        let forged = try #require(try TokenChecks.verify(String(tampered), on: server))
        #expect(forged.status == 1)
    }

    @Test func aRotatedOutKeyNoLongerVerifies() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let first = try await ServerProcess(dataDirectory: data)
        let tokens = try await TokenChecks.signIn(first, as: "dave")
        first.stop()
        let stolenKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(
                decoding: try Data(contentsOf: data.appendingPathComponent("signing-key.pem")), as: UTF8.self))

        // Rotate: the old key is retired but still published while its tokens may live.
        let rotate = try ExternalTool(url: BuildProducts.executable("twofold-server"))
            .run(["keys", "rotate"], environment: ["TWOFOLD_DATA_DIR": data.path, "PATH": "/usr/bin:/bin"])
        #expect(rotate.status == 0, "\(rotate.text)\(rotate.errorText)")
        let second = try await ServerProcess(dataDirectory: data)
        guard let stillValid = try TokenChecks.verify(tokens.accessToken.token, on: second) else { return }
        #expect(stillValid.status == 0, "a retired key verifies until its tokens expire: \(stillValid.errorText)")
        let fresh = try await TokenChecks.signIn(second, as: "erin")
        #expect(try #require(try TokenChecks.verify(fresh.accessToken.token, on: second)).status == 0)

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
        let resignedAsIs = try TokenChecks.resign(tokens.accessToken.token, with: stolenKey) { _ in }
        let asIs = try await client.send(API.Account.show, bearer: resignedAsIs)
        #expect(asIs.id == tokens.user.id, "the forging works: the same claims signed again are accepted")
        let afterRetirement = try TokenChecks.resign(tokens.accessToken.token, with: stolenKey) { claims in
            claims["iat"] = now
            claims["exp"] = now + 30 * 86_400
        }
        let forged = await refusal { try await client.send(API.Account.show, bearer: afterRetirement) }
        #expect(forged?.status == 401, "a token signed after the key retired is refused")
        let longLived = try TokenChecks.resign(tokens.accessToken.token, with: stolenKey) { claims in
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
        let rotatedOut = try #require(try TokenChecks.verify(tokens.accessToken.token, on: third))
        #expect(rotatedOut.status == 1)
        #expect(rotatedOut.errorText.contains("no key"))
        let account = await refusal { try await third.client.send(API.Account.show, bearer: tokens.accessToken.token) }
        #expect(account?.status == 401, "the server refuses it too")
        #expect(try FileManager.default.contentsOfDirectory(atPath: retired.path).isEmpty, "the aged key was deleted")
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

    /// Whoever holds the signing key cannot be stopped, but the token reader must read one
    /// header: a header or claims naming a member twice are refused, as is a token issued in
    /// the future. The same claims signed again as they were still work (the forging is real).
    @Test func tokensWithDuplicateMembersOrAFutureIssueTimeAreRefused() async throws {
        try await TestServers.withTarget { target in
            let token = try await target.register("tess")
            let key = try P256.Signing.PrivateKey(
                pemRepresentation: String(
                    decoding: try Data(
                        contentsOf: target.server.dataDirectory.appendingPathComponent("signing-key.pem")),
                    as: UTF8.self))
            let parts = token.split(separator: ".").map(String.init)
            let header = String(decoding: try TestServers.unbase64URL(parts[0]), as: UTF8.self)
            let claims = String(decoding: try TestServers.unbase64URL(parts[1]), as: UTF8.self)
            func sign(header: String, claims: String) throws -> String {
                let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
                return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
            }
            func account(_ bearer: String) async throws -> Int {
                try await target.client.exchange(API.Account.show, bearer: bearer).status
            }
            #expect(try await account(try sign(header: header, claims: claims)) == 200, "the same, signed again")

            let kid = try #require(
                (try JSONSerialization.jsonObject(with: Data(header.utf8)) as? [String: Any])?["kid"] as? String)
            let twoKids = String(header.dropLast()) + #","kid":"\#(kid)"}"#
            #expect(try await account(try sign(header: twoKids, claims: claims)) == 401, "a header naming kid twice")
            let twoAlgs = String(header.dropLast()) + #","alg":"ES256"}"#
            #expect(try await account(try sign(header: twoAlgs, claims: claims)) == 401, "a header naming alg twice")
            let sub = try #require(
                (try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any])?["sub"] as? String)
            let twoSubs = String(claims.dropLast()) + #","sub":"\#(sub)"}"#
            #expect(try await account(try sign(header: header, claims: twoSubs)) == 401, "claims naming sub twice")

            var future = try #require(try JSONSerialization.jsonObject(with: Data(claims.utf8)) as? [String: Any])
            let now = Int(Date().timeIntervalSince1970)
            future["iat"] = now + 600
            future["exp"] = now + 600 + 900
            let ahead = String(decoding: try JSONSerialization.data(withJSONObject: future), as: UTF8.self)
            #expect(try await account(try sign(header: header, claims: ahead)) == 401, "issued ten minutes from now")
        }
    }
}
