import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldCore
import TwofoldDevice
import TwofoldTestSupport

/// Built servers to test against: a server with a local SMS gateway (and one with a mail sink), and what waits on their deliveries.
enum TestServers {
    /// A running server with an SMS gateway, and the calls the attacks make.
    struct Target {
        let server: ServerProcess
        let gateway: SMSGateway
        /// Where the server's email goes, when the target has a mailbox (`withMailTarget`).
        var sink: SMTPSink? = nil

        var client: APIClient { server.client }

        /// Registers `name` (with `phone` typed in, not verified) and signs in with the password
        /// alone; the session's access token. With a mailbox, the address is confirmed with the
        /// link the registration sent, as its owner would.
        func register(_ name: String, phone: String? = nil) async throws -> String {
            let email = "\(name)@example.com"
            _ = try await client.send(
                API.Auth.register,
                RegisterRequest(
                    username: name, email: email, password: TestAccounts.password,
                    phoneNumber: phone))
            let bearer = try await client.send(
                API.Auth.login, LoginRequest(username: name, password: TestAccounts.password)
            ).tokens.accessToken.token
            if let sink {
                let messages = try await poll({ try sink.messages() }) {
                    $0.contains { $0.recipients == [email] && TestServers.isVerification($0) }
                }
                let text = TestServers.text(of: try #require(messages.last { $0.recipients == [email] }))
                let marker = try #require(text.range(of: "/\(Pages.verifyEmail.path)?token="))
                let token = String(text[marker.upperBound...].prefix { !$0.isWhitespace })
                _ = try await client.send(API.Account.verifyEmail, EmailVerifyRequest(token: token), bearer: bearer)
            }
            return bearer
        }

        /// Turns on SMS codes to `phone` from `token`'s session (the number becomes verified).
        func enableSMS(_ token: String, phone: String) async throws {
            let before = try gateway.messages().count
            _ = try await client.send(API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: phone), bearer: token)
            let code = try #require(try await gateway.nextMessage(after: before)?.code)
            _ = try await client.send(API.TwoFactor.smsVerify, CodeRequest(code: code), bearer: token)
        }

        /// The password, then the SMS code sent at login: a session with a recent second factor.
        func signInWithSMS(_ name: String) async throws -> String {
            try await DeviceKeyScenarios(server: server, gateway: gateway).signInWithPasswordAndSMS(name)
        }

        /// Sets up and confirms an authenticator app from `token`'s session; its secret and the
        /// backup codes (when it was the first factor).
        func enableTOTP(_ token: String) async throws -> (secret: [UInt8], backupCodes: [String]?) {
            let setup = try await client.send(API.TwoFactor.totpSetup, bearer: token)
            let secret = try Base32.decode(setup.secret)
            let verified = try await client.send(
                API.TwoFactor.totpVerify, CodeRequest(code: try Self.code(secret)), bearer: token)
            return (secret, verified.backupCodes)
        }

        /// Sends `body` to `endpoint` on `token`'s session and expects `403 step_up_required`.
        func expectStepUpRequired<Body: Encodable, Answer: Decodable>(
            _ endpoint: Endpoint<Body, Answer>, _ body: Body, bearer token: String,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async {
            let refused = await refusal(sourceLocation: sourceLocation) {
                try await client.send(endpoint, body, bearer: token)
            }
            #expect(
                refused?.status == 403 && refused?.code == .stepUpRequired,
                "\(endpoint): \(String(describing: refused))", sourceLocation: sourceLocation)
        }

        static func code(_ secret: [UInt8], offset: TimeInterval = 0) throws -> String {
            try TOTP(secret: secret).code(at: Date().addingTimeInterval(offset))
        }
    }

    /// `body` runs in the caller's isolation (a test on the main actor drives screen models).
    static func withTarget(
        environment extra: [String: String] = [:], isolation: isolated (any Actor)? = #isolation,
        _ body: (Target) async throws -> Void
    ) async throws {
        guard let python = TestPython.find() else { return }
        let gatewayPort = SMTPSink.freePort()
        let environment = [
            "TWOFOLD_SMS_PROVIDER": "webhook", "TWOFOLD_SMS_WEBHOOK_URL": "http://127.0.0.1:\(gatewayPort)/sms",
            "TWOFOLD_SMS_WEBHOOK_SECRET": "gateway-secret", "TWOFOLD_EMAIL_PROVIDER": "console",
        ].merging(extra) { $1 }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-attacks")
        defer { try? FileManager.default.removeItem(at: root) }
        let gateway = try SMSGateway(python: python, port: gatewayPort, secret: "gateway-secret")
        defer { gateway.stop() }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await body(Target(server: server, gateway: gateway))
    }

    // MARK: Issue T: one sign-in policy

    /// Verifies `phone` for `token`'s account with the code the gateway receives.
    static func verifyPhone(_ target: Target, _ token: String, phone: String) async throws {
        let client = target.client
        // Both are successes: the status tells a code sent (202) from the number changed (200).
        let before = try target.gateway.messages().count
        let asked = try await client.exchange(
            API.Account.changePhone, PhoneChangeRequest(phoneNumber: phone), bearer: token)
        guard asked.status == 202, case .codeSent = try client.read(asked, of: API.Account.changePhone) else {
            Issue.record("no code was sent: \(asked.status) \(asked.text)")
            return
        }
        let code = try #require(try await target.gateway.nextMessage(after: before)?.code)
        let confirmed = try await client.exchange(
            API.Account.changePhone, PhoneChangeRequest(phoneNumber: phone, code: code), bearer: token)
        guard confirmed.status == 200, case .changed = try client.read(confirmed, of: API.Account.changePhone)
        else {
            Issue.record("the number was not changed: \(confirmed.status) \(confirmed.text)")
            return
        }
    }

    /// The number of messages the gateway has once the delivery worker (which runs every
    /// second) has delivered everything queued: the count has not changed over three readings
    /// half a second apart.
    static func settled(_ gateway: SMSGateway) async throws -> Int {
        var count = try gateway.messages().count
        var unchanged = 0
        while unchanged < 3 {
            try await Task.sleep(for: .milliseconds(500))
            let now = try gateway.messages().count
            unchanged = now == count ? unchanged + 1 : 0
            count = now
        }
        return count
    }

    /// The bytes `text` encodes in base64url (the canonical form only, as the server reads it).
    static func unbase64URL(_ text: String) throws -> Data {
        Data(try #require(Base64URL.decode(text)))
    }

    /// A running server with an SMS gateway and a plain SMTP server that records every message.
    static func withMailTarget(
        environment extra: [String: String] = [:], _ body: (Target, SMTPSink) async throws -> Void
    ) async throws {
        guard let python = TestPython.find() else { return }
        let sink = try SMTPSink(python: python, security: "none")
        defer { sink.stop() }
        let environment = [
            "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "127.0.0.1", "TWOFOLD_SMTP_PORT": String(sink.port),
            "TWOFOLD_SMTP_SECURITY": "none", "TWOFOLD_EMAIL_FROM": "no-reply@twofold.example",
        ].merging(extra) { $1 }
        try await TestServers.withTarget(environment: environment) { target in
            var target = target
            target.sink = sink
            try await body(target, sink)
        }
    }

    /// Whether `message` is the link that confirms a new account's address.
    static func isVerification(_ message: SMTPSink.Message) -> Bool {
        text(of: message).contains("/\(Pages.verifyEmail.path)?token=")
    }

    /// A message's text as a person reads it: the body after the headers, decoded when sent
    /// as base64 (any non-ASCII body is).
    static func text(of message: SMTPSink.Message) -> String {
        let parts = message.data.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
        let headers = parts.first ?? ""
        let body = parts.dropFirst().joined(separator: "\n\n")
        guard headers.contains("Content-Transfer-Encoding: base64"),
            let data = Data(base64Encoded: body.filter { !$0.isWhitespace })
        else { return body }
        return String(decoding: data, as: UTF8.self)
    }
}
