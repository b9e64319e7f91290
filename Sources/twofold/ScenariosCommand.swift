import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldScenarios

/// `twofold scenarios`: the seeds' scenarios against the server, each on accounts of its own
/// and a fresh virtual phone (the one in the state folder is not touched).
struct ScenariosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenarios",
        abstract:
            "Run the device-key scenarios (1–10), the device PIN and biometrics flows (11), the fallback chain (12) "
            + "and approval on the phone (13).",
        discussion: """
            Each scenario registers its own accounts, sets the virtual phone as its seed describes,
            and checks what the server answers. Codes the server sends by SMS are asked for at a
            prompt (read them from the server's console), or, with --sms-webhook HOST:PORT, read
            from the server's signed SMS webhook: start the server with
            TWOFOLD_SMS_PROVIDER=webhook, TWOFOLD_SMS_WEBHOOK_URL=http://HOST:PORT/sms and
            TWOFOLD_SMS_WEBHOOK_SECRET, and give this command the same secret in
            TWOFOLD_SMS_WEBHOOK_SECRET. Passkeys answer for the server URL's origin, which the
            server must list in TWOFOLD_WEBAUTHN_ORIGINS (by default http://localhost:PORT).
            Exits non-zero when a scenario fails.
            """)

    @OptionGroup var options: ServerOptions
    @Option(help: "Run only scenario N (1-13).") var only: Int?
    @Flag(help: "Print the results as JSON: number, name, passed, steps (at, action, outcome, reason).")
    var json = false
    @Option(
        name: .customLong("sms-webhook"),
        help: "Listen on HOST:PORT for the server's signed SMS webhook and read codes from it.")
    var smsWebhook: String?

    func validate() throws {
        if let only, !ScenarioRunner.catalogue.contains(where: { $0.number == only }) {
            throw ValidationError("--only takes a scenario number from 1 to \(ScenarioRunner.catalogue.count)")
        }
    }

    func run() async throws {
        let inbox: any CodeInbox
        var listener: SMSWebhookListener?
        if let smsWebhook {
            listener = try Self.webhookListener(smsWebhook)
            inbox = listener!
        } else {
            inbox = TerminalInbox()
        }
        defer { listener?.stop() }
        let json = self.json
        let runner = ScenarioRunner(client: try options.client, inbox: inbox)
        let results = await runner.run(only: only) { number, step in
            guard !json else { return }
            let reason = step.reason.map { " [\($0)]" } ?? ""
            print("  \(number). \(step.action): \(step.outcome)\(reason)")
        }
        if json {
            let encoder = Wire.encoder()
            encoder.outputFormatting.insert(.sortedKeys)
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        } else {
            for result in results {
                print("\(result.passed ? "PASS" : "FAIL")  \(result.number). \(result.name)")
            }
        }
        let failed = results.filter { !$0.passed }
        if !failed.isEmpty {
            throw CommandFailure(
                description: "\(failed.count) of \(results.count) scenarios failed: "
                    + failed.map { String($0.number) }.joined(separator: ", "))
        }
    }
}

extension ScenariosCommand {
    /// The listener for `--sms-webhook HOST:PORT`, checking signatures with the server's secret
    /// (`TWOFOLD_SMS_WEBHOOK_SECRET`).
    static func webhookListener(_ address: String) throws -> SMSWebhookListener {
        guard let secret = ProcessInfo.processInfo.environment["TWOFOLD_SMS_WEBHOOK_SECRET"], !secret.isEmpty else {
            throw ValidationError("--sms-webhook checks signatures: set TWOFOLD_SMS_WEBHOOK_SECRET to the server's")
        }
        do {
            return try SMSWebhookListener(address: address, secret: secret)
        } catch {
            throw CommandFailure(description: "--sms-webhook: \(error)")
        }
    }
}

/// Codes typed by the person at the terminal, read from wherever the server sent them.
struct TerminalInbox: CodeInbox {
    func code(to destination: String, sentBy trigger: @Sendable () async throws -> Void) async throws -> String {
        try await trigger()
        guard let code = Terminal.ask("Code sent to \(PhoneMask.masked(destination)) (see the server's console): "),
            !code.isEmpty
        else {
            throw CommandFailure(description: "No code given (without a terminal, use --sms-webhook HOST:PORT).")
        }
        return code
    }
}
