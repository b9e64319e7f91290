import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldTestSupport

/// `twofold register | login | status | logout` against the built server, as a person or a script
/// runs them: the password on standard input, the code on a second run, the state folder
/// owner-only, nothing secret printed.
@Suite struct CommandLineAccountTests {
    let twofold = ExternalTool(url: BuildProducts.executable("twofold"))

    struct StatusJSON: Decodable {
        let signedIn: Bool
        let username: String?
        let userId: UUID?
        let expiresAt: Date?
        let methods: [FactorMethod]?
    }

    @Test func registerLoginWithACodeOnASecondRunStatusAndLogout() async throws {
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-cli")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let home = root.appendingPathComponent("home")
        let environment = ProcessInfo.processInfo.environment.merging([
            "TWOFOLD_SERVER": server.baseURL.absoluteString, "TWOFOLD_HOME": home.path,
        ]) { $1 }
        let password = Data((AuthEndToEndTests.password + "\n").utf8)
        func run(_ arguments: [String], input: Data? = nil) throws -> ExternalTool.Output {
            try twofold.run(arguments, environment: environment, input: input)
        }
        func status() throws -> StatusJSON {
            let output = try run(["status", "--json"])
            #expect(output.status == 0, "\(output.errorText)")
            return try Wire.decoder().decode(StatusJSON.self, from: output.standardOutput)
        }

        let registered = try run(
            ["register", "--username", "cli", "--email", "cli@example.com", "--password-stdin"], input: password)
        #expect(registered.status == 0 && registered.text.contains("Registered cli"), "\(registered.errorText)")
        let taken = try run(
            ["register", "--username", "cli", "--email", "cli@example.com", "--password-stdin"], input: password)
        #expect(taken.status != 0 && !taken.errorText.isEmpty)

        #expect(try status().signedIn == false)
        let wrong = try run(["login", "--username", "cli", "--password-stdin"], input: Data("nope\n".utf8))
        #expect(wrong.status != 0 && wrong.errorText.contains("password is wrong"), "\(wrong.errorText)")

        let login = try run(["login", "--username", "cli", "--password-stdin"], input: password)
        #expect(login.status == 0 && login.text.contains("Signed in as cli"), "\(login.errorText)")
        let signedIn = try status()
        #expect(signedIn.signedIn && signedIn.username == "cli" && signedIn.methods == [])
        #expect((signedIn.expiresAt ?? .distantPast) > Date())

        // The state folder and the session file are the owner's alone, and hold no password.
        let sessionFile = home.appendingPathComponent("session.json")
        let folderMode = try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: sessionFile.path)[.posixPermissions] as? Int
        #expect(folderMode == 0o700 && fileMode == 0o600)
        let stored = try Wire.decoder().decode(StoredSession.self, from: Data(contentsOf: sessionFile))
        #expect(
            !String(decoding: try Data(contentsOf: sessionFile), as: UTF8.self).contains(AuthEndToEndTests.password))

        // An authenticator app, turned on from the CLI's own session.
        let setup = try await server.client.send(API.TwoFactor.totpSetup, bearer: stored.accessToken.token)
        let secret = try Base32.decode(setup.secret)
        _ = try await server.client.send(
            API.TwoFactor.totpVerify, CodeRequest(code: try TOTP(secret: secret).code(at: Date())),
            bearer: stored.accessToken.token)

        // The password now asks for the code; with no terminal, the sign-in waits for a second run.
        let first = try run(["login", "--username", "cli", "--password-stdin"], input: password)
        #expect(first.status == 0 && first.text.contains("twofold login --code"), "\(first.text)\(first.errorText)")
        let pendingFile = home.appendingPathComponent("pending-sign-in.json")
        #expect(try FileManager.default.attributesOfItem(atPath: pendingFile.path)[.posixPermissions] as? Int == 0o600)
        let wrongCode = try run(["login", "--code", "000000"])
        #expect(wrongCode.status != 0 && wrongCode.errorText.contains("tries left"), "\(wrongCode.errorText)")
        let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
        let second = try run(["login", "--code", code])
        #expect(second.status == 0 && second.text.contains("Signed in as cli"), "\(second.errorText)")
        #expect(!FileManager.default.fileExists(atPath: pendingFile.path))
        #expect(try status().methods?.contains(.totp) == true)
        for output in [first, second, wrongCode] {
            #expect(!output.text.contains(code) && !output.errorText.contains(AuthEndToEndTests.password))
        }

        // Logging out ends the session here and on the server.
        let last = try Wire.decoder().decode(StoredSession.self, from: Data(contentsOf: sessionFile))
        let logout = try run(["logout"])
        #expect(logout.status == 0 && logout.text.contains("Signed out"), "\(logout.errorText)")
        #expect(try status().signedIn == false)
        do {
            _ = try await server.client.send(API.Auth.refresh, RefreshRequest(refreshToken: last.refreshToken.token))
            Issue.record("the signed-out session still refreshes")
        } catch let error as APIError {
            #expect(error.status == 401)
        }
        let again = try run(["login", "--code", code])
        #expect(again.status != 0, "no sign-in waits after logout")
    }
}
