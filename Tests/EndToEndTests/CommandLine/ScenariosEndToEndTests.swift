import Crypto
import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldScenarios
import TwofoldTestSupport

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `twofold scenarios` against a freshly started server, on SQLite and PostgreSQL, codes read
/// from the server's signed SMS webhook; and the scenarios catching a server that answers
/// wrongly, through a transport that alters one answer.
@Suite(.serialized) struct ScenariosEndToEndTests {
    static let secret = "scenario-webhook-secret"

    /// A server that sends SMS codes to the webhook at `webhookPort`, registrations not limited
    /// (every scenario registers accounts of its own).
    static func withServer(
        _ database: String, webhookPort: Int, _ body: (ServerProcess) async throws -> Void
    ) async throws {
        guard var environment = CodeSignIns.databaseEnvironment(database) else { return }
        environment.merge([
            "TWOFOLD_SMS_PROVIDER": "webhook", "TWOFOLD_SMS_WEBHOOK_URL": "http://127.0.0.1:\(webhookPort)/sms",
            "TWOFOLD_SMS_WEBHOOK_SECRET": secret, "TWOFOLD_EMAIL_PROVIDER": "console",
            "TWOFOLD_THROTTLE_REGISTER_PER_ADDRESS": "100/1",
        ]) { $1 }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-scenarios")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await body(server)
    }

    /// The passkeys' origin: the server's default one.
    static func url(_ server: ServerProcess) -> URL { URL(string: "http://localhost:\(server.port)")! }

    @Test(arguments: ["sqlite", "postgres"])
    func everyScenarioPassesFromTheCommandLine(_ database: String) async throws {
        let webhookPort = SMTPSink.freePort()
        try await Self.withServer(database, webhookPort: webhookPort) { server in
            let home = try BuildProducts.temporaryDirectory("twofold-e2e-scenarios-home")
            defer { try? FileManager.default.removeItem(at: home) }
            let tool = ExternalTool(url: BuildProducts.executable("twofold"))
            let environment = ProcessInfo.processInfo.environment.merging([
                "TWOFOLD_SERVER": Self.url(server).absoluteString, "TWOFOLD_HOME": home.path,
                "TWOFOLD_SMS_WEBHOOK_SECRET": Self.secret,
            ]) { $1 }
            let output = try tool.run(
                ["scenarios", "--json", "--sms-webhook", "127.0.0.1:\(webhookPort)"], environment: environment)
            let results = try Wire.decoder().decode([ScenarioResult].self, from: output.standardOutput)
            #expect(output.status == 0, "\(output.errorText)\n\(Self.failures(results))")
            #expect(results.map(\.number) == Array(1...13))
            #expect(results.allSatisfy { $0.passed && $0.steps.count >= 3 }, "\(Self.failures(results))")
            // Scenarios 8 and 9: the app notices the change itself; no button says what happened.
            for (number, noticed) in [(8, "security removed"), (9, "security is back")] {
                let steps = results.first { $0.number == number }?.steps ?? []
                #expect(
                    steps.contains { $0.action == "the app notices on its own" && $0.outcome.hasPrefix(noticed) },
                    "scenario \(number): \(steps)")
            }
            // The server's log holds no code and no full number.
            for result in results {
                for step in result.steps where step.outcome.contains("+1415555") {
                    Issue.record("a full number in a step: \(step)")
                }
            }
            #expect(!server.log.contains("+1415555"), "a full phone number in the server's log")

            // Without the secret the webhook cannot be checked: refused before anything runs.
            var unsigned = environment
            unsigned["TWOFOLD_SMS_WEBHOOK_SECRET"] = nil
            let refused = try tool.run(
                ["scenarios", "--only", "5", "--sms-webhook", "127.0.0.1:\(webhookPort)"], environment: unsigned)
            #expect(refused.status != 0 && refused.errorText.contains("TWOFOLD_SMS_WEBHOOK_SECRET"))
            let outOfRange = try tool.run(["scenarios", "--only", "14"], environment: environment)
            #expect(outOfRange.status != 0 && outOfRange.errorText.contains("--only"))
        }
    }

    static func failures(_ results: [ScenarioResult]) -> String {
        results.filter { !$0.passed }.map { result in
            "\(result.number). \(result.name): "
                + result.steps.map { "\($0.action) → \($0.outcome)" }.joined(separator: "; ")
        }.joined(separator: "\n")
    }

    /// A transport that hands one kind of answer back altered.
    struct Altering: Transport {
        let alter: @Sendable (URLRequest, HTTPAnswer) -> HTTPAnswer
        let wrapped = URLSessionTransport()
        func send(_ request: URLRequest) async throws -> HTTPAnswer { alter(request, try await wrapped.send(request)) }
    }

    @Test func aServerThatTakesAReusedSignatureFailsScenarioSix() async throws {
        let listener = try SMSWebhookListener(address: "127.0.0.1:0", secret: Self.secret)
        defer { listener.stop() }
        try await Self.withServer("sqlite", webhookPort: listener.port) { server in
            // Turns the refusal of a signature already used into the success a broken server
            // would give.
            let broken = Altering { request, answer in
                guard request.url?.path.hasSuffix(API.DeviceKeys.verifySignature.template) == true, answer.status == 409
                else { return answer }
                let body = try? Wire.encoder().encode(
                    DeviceTokenResponse(token: "forged", message: "Authentication successful"))
                return HTTPAnswer(status: 200, headers: ["Content-Type": Wire.json], body: body ?? Data())
            }
            let honest = ScenarioRunner(client: APIClient(baseURL: Self.url(server)), inbox: listener)
            let passing = await honest.run(only: 6)
            #expect(passing.map(\.passed) == [true], "\(Self.failures(passing))")
            let fooled = ScenarioRunner(
                client: APIClient(baseURL: Self.url(server), transport: broken), inbox: listener)
            let failing = await fooled.run(only: 6)
            #expect(failing.map(\.passed) == [false])
            #expect(failing.first?.steps.last?.action == "send the same signature again", "\(Self.failures(failing))")
        }
    }

    /// The hex HMAC-SHA256 the server signs a webhook's body with.
    static func mac(_ body: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
    }

    /// A sender that stops half-way, or one that goes away without reading the answer, holds up
    /// no one: the next signed message is taken at once, and the process lives on (no SIGPIPE).
    @Test func aSlowOrBrokenSenderHoldsUpNoOne() async throws {
        let listener = try SMSWebhookListener(address: "127.0.0.1:0", secret: Self.secret)
        defer { listener.stop() }
        func connect() throws -> Int32 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(listener.port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0)
            return descriptor
        }
        // Broken: half a request, then a reset instead of reading the answer.
        for _ in 0..<5 {
            let broken = try connect()
            _ = Array("POST /sms HTTP/1.1\r\nHost: x\r\n".utf8).withUnsafeBytes {
                send(broken, $0.baseAddress, $0.count, 0)
            }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(broken, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(broken)
        }
        // Slow: one byte, then nothing, held open.
        let slow = try connect()
        defer { close(slow) }
        _ = Array("P".utf8).withUnsafeBytes { send(slow, $0.baseAddress, $0.count, 0) }
        try await Task.sleep(for: .milliseconds(200))

        let body = #"{"to":"+14155550101","message":"Your Twofold code is 654321."}"#
        let started = ContinuousClock.now
        let code = try await listener.code(to: "+14155550101") {
            let request = HTTP.request(
                "POST", try #require(URL(string: listener.url)), body: Data(body.utf8),
                headers: ["X-Twofold-Signature": "sha256=" + Self.mac(body)])
            let status = try await HTTP.send(request).status
            #expect(status == 204)
        }
        #expect(code == "654321")
        #expect(ContinuousClock.now - started < .seconds(3), "the slow sender held the listener up")
    }

    @Test func theWebhookListenerKeepsOnlySignedMessages() async throws {
        let listener = try SMSWebhookListener(address: "127.0.0.1:0", secret: Self.secret)
        defer { listener.stop() }
        @Sendable func post(_ body: String, signature: String?) async throws -> Int {
            let request = HTTP.request(
                "POST", try #require(URL(string: listener.url)), body: Data(body.utf8),
                headers: signature.map { ["X-Twofold-Signature": $0] } ?? [:])
            return try await HTTP.send(request).status
        }
        let body = #"{"to":"+14155550100","message":"Your Twofold code is 123456."}"#
        #expect(try await post(body, signature: nil) == 401)
        #expect(try await post(body, signature: "sha256=" + String(repeating: "0", count: 64)) == 401)
        #expect(listener.received.isEmpty && listener.refusedCount == 2)
        let signed = try await listener.code(to: "+14155550100") {
            let status = try await post(body, signature: "sha256=" + Self.mac(body))
            #expect(status == 204)
        }
        #expect(signed == "123456")
        let notJSON = try await post("not json", signature: "sha256=" + Self.mac("not json"))
        #expect(notJSON == 400)
    }
}
