import Foundation
import Testing
import TwofoldTestSupport

/// The pages as people use them: `scripts/browser_check.py` drives one headless Chromium (with
/// the DevTools virtual authenticator for passkeys, oathtool for authenticator codes, axe-core on
/// every page at two widths) against the built server, whose email goes to a real SMTP sink.
/// Screenshots of every page are kept in `.build/browser-screenshots`.
@Suite struct BrowserEndToEndTests {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    @Test(.timeLimit(.minutes(15))) func fourPeopleSignInRecoverAdministerAndTestInABrowser() async throws {
        guard let python = TestPython.find() else { return }
        guard FileManager.default.isExecutableFile(atPath: Self.chromium),
            FileManager.default.isExecutableFile(atPath: Self.chromedriver)
        else {
            if ProcessInfo.processInfo.environment["TWOFOLD_ALLOW_MISSING_TOOLS"] != "1" {
                Issue.record(
                    "no Chromium and chromedriver; scripts/test installs Debian's chromium and chromium-driver")
            }
            return
        }
        let root = try BuildProducts.temporaryDirectory("browser")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let sink = try SMTPSink(python: python, security: "none")
        defer { sink.stop() }
        // SMS codes go to a local gateway, whose messages the dashboard's person reads.
        let gatewayPort = SMTPSink.freePort()
        let gateway = try SMSGateway(python: python, port: gatewayPort, secret: "gateway-secret")
        defer { gateway.stop() }
        let environment = [
            "TWOFOLD_BCRYPT_COST": "4", "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "127.0.0.1",
            "TWOFOLD_SMTP_PORT": String(sink.port), "TWOFOLD_SMTP_SECURITY": "none",
            "TWOFOLD_EMAIL_FROM": "twofold@example.com", "TWOFOLD_SMS_PROVIDER": "webhook",
            "TWOFOLD_SMS_WEBHOOK_URL": "http://127.0.0.1:\(gatewayPort)/sms",
            "TWOFOLD_SMS_WEBHOOK_SECRET": "gateway-secret", "TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS": "100/1",
            // A minute, so that a person's proof goes stale within the run (the step-up page).
            "TWOFOLD_STEP_UP_SECONDS": "60",
        ]
        // The administrator, made as an operator makes one (the password on standard input).
        let adminPassword = "an administrator's long password"
        var command = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TWOFOLD_") }
        command.merge(environment) { $1 }
        command["TWOFOLD_DATA_DIR"] = data.path
        let created = try ExternalTool(url: BuildProducts.executable("twofold-server")).run(
            ["admin", "create", "--username", "ada", "--email", "ada@example.com"], environment: command,
            input: Data((adminPassword + "\n").utf8))
        try #require(created.status == 0, "admin create: \(created.errorText)")
        // The key of the authenticator app it made, printed once beside the password.
        let adminKey = try #require(
            created.text.split(separator: "\n").first { $0.hasPrefix("Key: ") }.map { String($0.dropFirst(5)) },
            "admin create printed no key: \(created.text)")

        let server = try await ServerProcess(dataDirectory: data, environment: environment)
        defer { server.stop() }
        // `twofold dashboard` against the same server: the same Chromium opens it last.
        let dashboardPort = SMTPSink.freePort()
        let dashboardLog = root.appendingPathComponent("dashboard.log")
        let dashboard = try ChildProcess(
            BuildProducts.executable("twofold"),
            arguments: ["--server", "http://localhost:\(server.port)", "dashboard", "--port", String(dashboardPort)],
            output: .file(dashboardLog), error: .file(dashboardLog))
        defer {
            dashboard.terminate()
            _ = dashboard.waitUntilExit()
        }
        // The page needs the key that only the printed address carries (`#t=…`).
        let dashboardAddress = try #require(
            await Self.printedAddress(in: dashboardLog, port: dashboardPort),
            "`twofold dashboard` printed no address with a key in 60 s: \(String(decoding: (try? Data(contentsOf: dashboardLog)) ?? Data(), as: UTF8.self))"
        )
        let shots = BuildProducts.repositoryRoot.appendingPathComponent(".build/browser-screenshots")
        try? FileManager.default.removeItem(at: shots)
        // `localhost`, the relying party's ID the server takes from its port when no origin is set.
        let run = try python.run([
            BuildProducts.repositoryRoot.appendingPathComponent("scripts/browser_check.py").path,
            "--base", "http://localhost:\(server.port)", "--mail-dir",
            sink.directory.appendingPathComponent("messages").path, "--shots", shots.path, "--admin", "ada",
            "--admin-password", adminPassword, "--admin-totp-secret", adminKey, "--chromium", Self.chromium,
            "--chromedriver", Self.chromedriver,
            "--dashboard", dashboardAddress, "--sms-dir", gateway.directory.path,
            "--clock-file", server.clockFile.path, "--cli", BuildProducts.executable("twofold").path,
        ])
        let output = String(decoding: run.standardOutput, as: UTF8.self)
        #expect(
            run.status == 0,
            "browser_check.py failed:\n\(output)\n\(run.errorText.suffix(3000))\nserver log:\n\(server.log.suffix(3000))"
        )
        #expect(output.contains("step: rae signs in with the pass and must set up a factor first"))
        #expect(output.contains("ok: "))
        #expect(output.contains("step: the dashboard: all ten scenarios and approval on the phone passed"))
        #expect(output.contains("step: pax is signed in by the phone's approval"))
        let saved = (try? FileManager.default.contentsOfDirectory(atPath: shots.path)) ?? []
        #expect(saved.filter { $0.hasSuffix("-phone.png") }.count >= 15, "screenshots: \(saved.count)")
    }

    /// The address `twofold dashboard` printed, waiting for it.
    static func printedAddress(in log: URL, port: Int) async throws -> String? {
        let start = "http://127.0.0.1:\(port)/#t="
        for _ in 0..<600 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: start) {
                let key = text[range.upperBound...].prefix { $0.isHexDigit }
                if key.count == 48 { return start + key }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
