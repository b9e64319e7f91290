import ArgumentParser
import Foundation
import TwofoldAPI
import TwofoldClient
import TwofoldDevice
import TwofoldScenarios
import TwofoldScreens
import TwofoldTestingScreens

/// `twofold dashboard`: seed 004's testing dashboard as a web page on loopback, rendered from the
/// same `TestingDashboardModel` the iOS app shows, on the SDK and a virtual phone whose switches
/// the page flips.
struct DashboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract:
            "Serve the testing dashboard on 127.0.0.1: a virtual phone against the server, its scenarios and log.",
        discussion: """
            Open the printed address in a browser, once: it carries a key for this run that the
            first page to open it keeps, so nobody else on the machine can drive the dashboard.
            The page shows the virtual phone's status and switches (secure hardware, biometry,
            passcode, lockout, a declined prompt), the test actions, seed 004's ten scenarios and
            the results log. Codes the server sends by SMS
            are typed into the page's code field (read them from the server's console), or, with
            --sms-webhook HOST:PORT, read from the server's signed SMS webhook as `twofold
            scenarios` does (TWOFOLD_SMS_WEBHOOK_SECRET must match the server's). Passkeys answer
            for the server URL's origin. Stop it with Ctrl-C.
            """)

    @OptionGroup var options: ServerOptions
    @Option(help: "The port to serve on, on 127.0.0.1 (0 lets the system choose).") var port = 8090
    @Option(
        name: .customLong("sms-webhook"),
        help: "Listen on HOST:PORT for the server's signed SMS webhook and read codes from it.")
    var smsWebhook: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port takes 0 to 65535") }
    }

    func run() async throws {
        let listener = try smsWebhook.map(ScenariosCommand.webhookListener)
        defer { listener?.stop() }
        let client = try options.client
        let model = await MainActor.run {
            TestingDashboardModel(
                client: client, device: VirtualPhone(.faceID),
                deviceID: "dashboard-" + String(UInt32.random(in: 0...UInt32.max), radix: 36), codes: listener)
        }
        await model.refresh()
        let page = DashboardPage(model: model, startupKey: DashboardPage.newToken())
        let server: LoopbackHTTPServer
        do {
            server = try LoopbackHTTPServer(address: "127.0.0.1:\(port)", bodyLimit: 4096, name: "dashboard") {
                page.answer($0)
            }
        } catch {
            throw CommandFailure(description: "cannot serve on 127.0.0.1:\(port): \(error)")
        }
        defer { server.stop() }
        // Written unbuffered: a script that started the command reads the address at once. The
        // token is only here, in the address's fragment: the page itself never carries it.
        FileHandle.standardOutput.write(
            Data(
                ("Twofold testing dashboard at http://127.0.0.1:\(server.port)/#t=\(page.startupKey) (against "
                    + "\(client.origin)).\nOpen that whole address once: the first page to open it keeps the "
                    + "dashboard's key, and the link stops working. Ctrl-C stops the dashboard.\n")
                    .utf8))
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
