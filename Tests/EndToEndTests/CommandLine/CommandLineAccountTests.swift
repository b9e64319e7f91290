import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// `twofold register | login | status | logout` against the built server, as a person or a script
/// runs them: the password on standard input, the code on a second run, the state folder
/// owner-only, nothing secret printed.
@Suite struct CommandLineAccountTests {
    let twofold = ExternalTool(url: BuildProducts.executable("twofold"))
    /// The password as a script pipes it to `--password-stdin`.
    let password = Data((TestAccounts.password + "\n").utf8)

    /// Runs `body` with a freshly started built server, a state folder for the tool (`home`, in
    /// a temporary folder removed after) and `run`, which runs the tool against the server (at
    /// the URL `at` gives) with that folder.
    func withTool(
        _ name: String, at url: (ServerProcess) -> String = { $0.baseURL.absoluteString },
        _ body: (ServerProcess, URL, CLI) async throws -> Void
    ) async throws {
        let root = try BuildProducts.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(dataDirectory: root.appendingPathComponent("data"))
        defer { server.stop() }
        let home = root.appendingPathComponent("home")
        let environment = ProcessInfo.processInfo.environment.merging([
            "TWOFOLD_SERVER": url(server), "TWOFOLD_HOME": home.path,
        ]) { $1 }
        try await body(server, home, CLI(tool: twofold, environment: environment))
    }

    /// The tool with a test's environment: `run(arguments, input:)`.
    struct CLI {
        let tool: ExternalTool
        let environment: [String: String]

        func callAsFunction(_ arguments: [String], input: Data? = nil) throws -> ExternalTool.Output {
            try tool.run(arguments, environment: environment, input: input)
        }
    }

    struct StatusJSON: Decodable {
        let signedIn: Bool
        let username: String?
        let userId: UUID?
        let expiresAt: Date?
        let methods: [FactorMethod]?
    }

    @Test func registerLoginWithACodeOnASecondRunStatusAndLogout() async throws {
        try await withTool("twofold-e2e-cli") { server, home, run in
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
            // A closed port: nothing answered, and the words name the address tried.
            let closed = try run(
                [
                    "--server", "http://127.0.0.1:9", "register", "--username", "cli2", "--email", "cli2@example.com",
                    "--password-stdin",
                ], input: password)
            #expect(
                closed.status != 0 && closed.errorText.contains("Nothing answered at http://127.0.0.1:9"),
                "\(closed.errorText)")

            #expect(try status().signedIn == false)
            let wrong = try run(["login", "--username", "cli", "--password-stdin"], input: Data("nope\n".utf8))
            #expect(wrong.status != 0 && wrong.errorText.contains("password is wrong"), "\(wrong.errorText)")

            let login = try run(["login", "--username", "cli", "--password-stdin"], input: password)
            #expect(login.status == 0 && login.text.contains("Signed in as cli"), "\(login.errorText)")
            let signedIn = try status()
            #expect(signedIn.signedIn && signedIn.username == "cli" && signedIn.methods == [])
            // `--server` goes before the command too; the session belongs to its own server, and
            // another server is neither shown it nor sent its tokens.
            let named = try run(["--server", server.baseURL.absoluteString, "status", "--json"])
            #expect(named.status == 0 && named.text.contains("\"signedIn\":true"), "\(named.text)\(named.errorText)")
            let elsewhere = try run(["--server", "http://127.0.0.1:9", "status", "--json"])
            #expect(elsewhere.status == 0 && elsewhere.text.contains("\"signedIn\":false"), "\(elsewhere.text)")
            #expect((signedIn.expiresAt ?? .distantPast) > Date())

            // The state folder and the session file are the owner's alone, and hold no password.
            let sessionFile = home.appendingPathComponent("session.json")
            let folderMode = try FileManager.default.attributesOfItem(atPath: home.path)[.posixPermissions] as? Int
            let fileMode = try FileManager.default.attributesOfItem(atPath: sessionFile.path)[.posixPermissions] as? Int
            #expect(folderMode == 0o700 && fileMode == 0o600)
            let stored = try Wire.decoder().decode(StoredSession.self, from: Data(contentsOf: sessionFile))
            #expect(
                !String(decoding: try Data(contentsOf: sessionFile), as: UTF8.self).contains(TestAccounts.password)
            )

            // An authenticator app, turned on from the CLI's own session.
            let setup = try await server.client.send(API.TwoFactor.totpSetup, bearer: stored.accessToken.token)
            let secret = try Base32.decode(setup.secret)
            _ = try await server.client.send(
                API.TwoFactor.totpVerify, CodeRequest(code: try TOTP(secret: secret).code(at: Date())),
                bearer: stored.accessToken.token)

            // The password now asks for the code; with no terminal, the sign-in waits for a second run.
            let first = try run(["login", "--username", "cli", "--password-stdin"], input: password)
            #expect(first.status == 3 && first.text.contains("twofold login --code"), "\(first.text)\(first.errorText)")
            let pendingFile = home.appendingPathComponent("pending-sign-in.json")
            #expect(
                try FileManager.default.attributesOfItem(atPath: pendingFile.path)[.posixPermissions] as? Int == 0o600)
            // The waiting sign-in belongs to its server: another is sent neither its flow nor a code.
            let pendingElsewhere = try run(["--server", "http://127.0.0.1:9", "login", "--code", "000000"])
            #expect(
                pendingElsewhere.status != 0 && pendingElsewhere.errorText.contains("is for"),
                "\(pendingElsewhere.errorText)")
            let wrongCode = try run(["login", "--code", "000000"])
            #expect(wrongCode.status != 0 && wrongCode.errorText.contains("tries left"), "\(wrongCode.errorText)")
            let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
            let second = try run(["login", "--code", code, "--trust-device"])
            #expect(second.status == 0 && second.text.contains("Signed in as cli"), "\(second.errorText)")
            #expect(!FileManager.default.fileExists(atPath: pendingFile.path))
            #expect(try status().methods?.contains(.totp) == true)
            for output in [first, second, wrongCode] {
                #expect(!output.text.contains(code) && !output.errorText.contains(TestAccounts.password))
            }

            // Logging out ends the session here and on the server.
            let last = try Wire.decoder().decode(StoredSession.self, from: Data(contentsOf: sessionFile))
            let logout = try run(["logout"])
            #expect(logout.status == 0 && logout.text.contains("Signed out"), "\(logout.errorText)")
            #expect(try status().signedIn == false)
            do {
                _ = try await server.client.send(
                    API.Auth.refresh, RefreshRequest(refreshToken: last.refreshToken.token))
                Issue.record("the signed-out session still refreshes")
            } catch let error as APIError {
                #expect(error.status == 401)
            }
            let again = try run(["login", "--code", code])
            #expect(again.status != 0, "no sign-in waits after logout")

            // This device was remembered (--trust-device): the password alone signs in here.
            let rememberedFile = home.appendingPathComponent("remembered-devices.json")
            #expect(
                try FileManager.default.attributesOfItem(atPath: rememberedFile.path)[.posixPermissions] as? Int
                    == 0o600)
            let trusted = try run(["login", "--username", "cli", "--password-stdin"], input: password)
            #expect(
                trusted.status == 0 && trusted.text.contains("Signed in as cli"), "\(trusted.text)\(trusted.errorText)")
            #expect(!FileManager.default.fileExists(atPath: pendingFile.path), "no second step asked")
        }
    }

    /// `twofold totp enable` (the code on a second run, backup codes shown once), then `passkey
    /// add | list | rename | remove` with the virtual phone kept in the state folder, as the
    /// server sees them.
    @Test func totpEnableAndPasskeysFromTheCommandLine() async throws {
        // The virtual passkeys answer for the server's origin, which is the default one here.
        try await withTool("twofold-e2e-cli-security", at: { "http://localhost:\($0.port)" }) { server, home, run in
            let notYet = try run(["passkey", "list"])
            #expect(notYet.status != 0 && notYet.errorText.contains("Not signed in"), "\(notYet.errorText)")
            _ = try run(
                ["register", "--username", "keys", "--email", "keys@example.com", "--password-stdin"], input: password)
            #expect(try run(["login", "--username", "keys", "--password-stdin"], input: password).status == 0)

            // No terminal: the setup shows the URI and waits for `--code`.
            let started = try run(["totp", "enable"])
            #expect(started.status == 0 && started.text.contains("--code"), "\(started.errorText)")
            let uri = try #require(started.text.split(separator: "\n").first { $0.hasPrefix("URI: ") }?.dropFirst(5))
            let secret = try OTPAuthURI(parsing: String(uri)).secret
            let wrong = try run(["totp", "enable", "--code", "000000"])
            #expect(wrong.status != 0, "\(wrong.text)")
            let enabled = try run(["totp", "enable", "--code", try TOTP(secret: secret).code(at: Date())])
            #expect(enabled.status == 0 && enabled.text.contains("codes are on"), "\(enabled.errorText)")
            let backupCodes = enabled.text.split(separator: "\n").filter { $0.hasPrefix("  ") }
            #expect(backupCodes.count == 10)

            // Adding a passkey to an account with a second factor needs one proven lately: with no
            // terminal to ask at, the step-up is refused in words.
            let unproven = try run(["passkey", "add"])
            #expect(unproven.status != 0 && unproven.errorText.contains("confirm it is you"), "\(unproven.errorText)")
            // The password waits for the code: exit status 3, not success.
            #expect(try run(["login", "--username", "keys", "--password-stdin"], input: password).status == 3)
            let code = try TOTP(secret: secret).code(at: Date().addingTimeInterval(30))
            #expect(try run(["login", "--code", code]).status == 0)
            let added = try run(["passkey", "add", "--name", "Virtual phone"])
            #expect(added.status == 0 && added.text.contains("Virtual phone"), "\(added.errorText)")
            let phoneFile = home.appendingPathComponent("phone.json")
            #expect(
                try FileManager.default.attributesOfItem(atPath: phoneFile.path)[.posixPermissions] as? Int == 0o600)
            let listed = try run(["passkey", "list"])
            let line = try #require(listed.text.split(separator: "\n").first { $0.contains("Virtual phone") })
            let id = String(try #require(line.split(separator: " ").first))

            // The server has it, and the phone kept it: a passkey sign-in from a new run works.
            let stored = try Wire.decoder().decode(
                StoredSession.self, from: Data(contentsOf: home.appendingPathComponent("session.json")))
            let onServer = try await server.client.send(API.Passkeys.list, bearer: stored.accessToken.token).credentials
            #expect(onServer.map(\.id) == [id])
            let kept = try PhoneFolder(folder: home).load()
            #expect(kept.passkeys.count == 1)

            // `--`: a credential ID may start with "-" (base64url), which is no option.
            let renamed = try run(["passkey", "rename", "--", id, "Work phone"])
            #expect(renamed.status == 0 && renamed.text.contains("Work phone"), "\(renamed.errorText)")
            let removed = try run(["passkey", "remove", "--", id])
            #expect(removed.status == 0, "\(removed.errorText)")
            #expect(try run(["passkey", "list"]).text.contains("No passkeys."))
            #expect(try PhoneFolder(folder: home).load().passkeys.isEmpty)
            let unknown = try run(["passkey", "remove", id])
            #expect(unknown.status != 0 && !unknown.errorText.isEmpty)
            for output in [started, enabled, added, listed] {
                #expect(!output.errorText.contains(TestAccounts.password))
            }
        }
    }

    /// `twofold device enroll | sign-in | unenroll` with the virtual phone kept between runs: the
    /// key made at enrolment signs the next run's sign-in (alone, or after the password), and a
    /// session it made alone may not remove it.
    @Test func aDeviceKeyFromTheCommandLine() async throws {
        try await withTool("twofold-e2e-cli-device") { server, home, run in
            _ = try run(
                ["register", "--username", "phone", "--email", "phone@example.com", "--password-stdin"], input: password
            )
            #expect(try run(["login", "--username", "phone", "--password-stdin"], input: password).status == 0)
            let enrolled = try run(["device", "enroll", "--biometrics"])
            #expect(enrolled.status == 0 && enrolled.text.contains("behind biometrics"), "\(enrolled.errorText)")
            let kept = try PhoneFolder(folder: home).load()
            #expect(kept.keys.count == 1 && kept.keys.values.first?.protection == .biometric)

            #expect(try run(["logout"]).status == 0)
            // No --username: the account this device holds a key for.
            let signedIn = try run(["device", "sign-in"])
            #expect(signedIn.status == 0 && signedIn.text.contains("Signed in as phone"), "\(signedIn.errorText)")
            let status = try run(["status", "--json"])
            #expect(status.text.contains("\"signedIn\":true"), "\(status.text)")

            // The session the key made may not remove the key: the server asks for another proof,
            // and with no terminal to ask at the command says so.
            let unproven = try run(["device", "unenroll"])
            #expect(unproven.status != 0 && unproven.errorText.contains("Step up"), "\(unproven.errorText)")
            // The password, then the key as the second factor: that session may remove the key.
            let withPassword = try run(["login", "--username", "phone", "--password-stdin"], input: password)
            #expect(
                withPassword.status == 0 && withPassword.text.contains("Signed in as phone"), "\(withPassword.text)")
            let unenrolled = try run(["device", "unenroll"])
            #expect(unenrolled.status == 0, "\(unenrolled.errorText)")
            #expect(try PhoneFolder(folder: home).load().keys.isEmpty)
            #expect(try run(["logout"]).status == 0)
            // Not enrolled any more: the server asks for an SMS code, so the phone shows no prompt
            // and the command offers the code (the server answers the same whether or not the
            // account has a phone, so as not to tell).
            let unnamed = try run(["device", "sign-in"])
            #expect(unnamed.status != 0 && unnamed.errorText.contains("--username"), "\(unnamed.errorText)")
            let noKey = try run(["device", "sign-in", "--username", "phone"])
            #expect(!noKey.text.contains("no longer usable") && noKey.text.contains("--code"), "\(noKey.text)")
            #expect(try run(["status", "--json"]).text.contains("\"signedIn\":false"))
        }
    }
}
