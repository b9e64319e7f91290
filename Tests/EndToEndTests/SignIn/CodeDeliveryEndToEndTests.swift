import Foundation
import Testing
import TwofoldAPI
import TwofoldClient
import TwofoldTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SMS and email sign-in against the built binary, with the codes travelling through real
/// protocols: a signed webhook to a local SMS gateway, and SMTP with STARTTLS and AUTH to a local
/// mail server. On SQLite and on PostgreSQL.
@Suite(.serialized) struct CodeDeliveryEndToEndTests {
    @Test(arguments: ["sqlite", "postgres"])
    func smsSignInThroughASignedWebhookThatIsDownAtFirst(_ database: String) async throws {
        guard let python = TestPython.find(), var environment = CodeSignIns.databaseEnvironment(database) else {
            return
        }
        let gatewayPort = SMTPSink.freePort()
        environment.merge([
            "TWOFOLD_SMS_PROVIDER": "webhook", "TWOFOLD_SMS_WEBHOOK_URL": "http://127.0.0.1:\(gatewayPort)/sms",
            "TWOFOLD_SMS_WEBHOOK_SECRET": "gateway-secret", "TWOFOLD_EMAIL_PROVIDER": "disabled",
        ]) { $1 }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-sms")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await ResetDatabase.run(server)
        let tokens = try await TokenChecks.signIn(server, as: "grace")

        _ = try await server.client.send(
            API.TwoFactor.smsSetup, SMSSetupRequest(phoneNumber: CodeSignIns.phone), bearer: tokens.accessToken.token)
        // Nobody listens yet: the first attempt fails and the message waits in the outbox.
        let failed = try await poll({ server.log }) { $0.contains("delivery failed") }
        #expect(failed.contains("delivery failed"), "the worker tried while the gateway was down")

        let gateway = try SMSGateway(python: python, port: gatewayPort, secret: "gateway-secret")
        defer { gateway.stop() }
        let first = try await gateway.waitForMessages(1)
        let enableMessage = try #require(first.first, "the code arrived once the gateway came back")
        #expect(enableMessage.to == CodeSignIns.phone)
        let enabled = try await server.client.send(
            API.TwoFactor.smsVerify, CodeRequest(code: try #require(enableMessage.code)),
            bearer: tokens.accessToken.token)
        #expect(enabled.backupCodes?.count == 10)

        let (challenge, signedIn) = try await CodeSignIns.signInWithCode(server, as: "grace") {
            try await gateway.waitForMessages(2).dropFirst().first?.code
        }
        #expect(challenge.availableMethods == [.sms, .backup])
        #expect(challenge.maskedPhone == "+•••••••0199")
        if let verified = try TokenChecks.verify(signedIn.accessToken.token, on: server) {
            #expect(verified.text.contains(#""amr": ["pwd", "sms", "mfa"]"#))
        }
        // Neither the codes nor the full number reach the log.
        let log = server.log
        for message in try gateway.messages() { #expect(!log.contains(try #require(message.code))) }
        #expect(!log.contains(CodeSignIns.phone))
    }

    @Test(arguments: ["sqlite", "postgres"])
    func emailSignInThroughSMTPWithSTARTTLS(_ database: String) async throws {
        guard let python = TestPython.find(), var environment = CodeSignIns.databaseEnvironment(database) else {
            return
        }
        let sink = try SMTPSink(python: python, security: "starttls", username: "twofold", password: "mail-pass")
        defer { sink.stop() }
        environment.merge([
            "TWOFOLD_SMS_PROVIDER": "disabled", "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "localhost",
            "TWOFOLD_SMTP_PORT": String(sink.port), "TWOFOLD_SMTP_SECURITY": "starttls",
            "TWOFOLD_SMTP_USERNAME": "twofold", "TWOFOLD_SMTP_PASSWORD": "mail-pass",
            "TWOFOLD_EMAIL_FROM": "no-reply@twofold.example", "TWOFOLD_SMTP_CA_FILE": sink.certificate.path,
        ]) { $1 }
        let root = try BuildProducts.temporaryDirectory("twofold-e2e-email")
        defer { try? FileManager.default.removeItem(at: root) }
        let server = try await ServerProcess(
            dataDirectory: root.appendingPathComponent("data"), environment: environment)
        defer { server.stop() }
        try await ResetDatabase.run(server)
        let tokens = try await TokenChecks.signIn(server, as: "heidi")

        _ = try await server.client.send(API.TwoFactor.emailSetup, bearer: tokens.accessToken.token)
        // The link that confirms the address came first, at registration; then the code.
        let codeMails = { try sink.messages().filter { $0.data.contains("Your Twofold code") } }
        let enableMail = try #require(try await poll(codeMails) { !$0.isEmpty }.first)
        #expect(enableMail.tls && enableMail.user == "twofold")
        #expect(enableMail.mailFrom == "no-reply@twofold.example")
        #expect(enableMail.recipients == ["heidi@example.com"])
        _ = try await server.client.send(
            API.TwoFactor.emailVerify, CodeRequest(code: try #require(oneTimeCode(in: enableMail.data))),
            bearer: tokens.accessToken.token)

        let (challenge, _) = try await CodeSignIns.signInWithCode(server, as: "heidi") {
            // The notice that email codes were added comes between the two codes.
            try await poll({ try codeMails().dropFirst().compactMap { oneTimeCode(in: $0.data) } }) {
                !$0.isEmpty
            }.first
        }
        #expect(challenge.availableMethods == [.email, .backup])
        #expect(!server.log.contains("mail-pass"))
    }
}
