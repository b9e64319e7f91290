import Foundation
import Testing
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

/// The SMTP client against a real SMTP server (aiosmtpd, `scripts/smtp_sink.py`).
@Suite struct SMTPProviderTests {
    static let message = OutgoingMessage(
        channel: .email, destination: "alice@example.com", subject: "Your Twofold code",
        body: "Your Twofold code is 123456.\n.A line that starts with a dot\nBye")

    static func settings(_ sink: SMTPSink, security: Configuration.SMTPSettings.Security, trust: Bool = true)
        -> Configuration.SMTPSettings
    {
        Configuration.SMTPSettings(
            host: "localhost", port: sink.port, security: security,
            username: security == .none ? nil : "twofold", password: security == .none ? nil : "mail-pass",
            from: "no-reply@twofold.example", caFile: trust && security != .none ? sink.certificate.path : nil)
    }

    static func withSink(
        _ security: String, authenticated: Bool = true, loginOnly: Bool = false,
        _ body: (SMTPSink) async throws -> Void
    ) async throws {
        guard let python = TestPython.find() else { return }
        let sink = try SMTPSink(
            python: python, security: security, username: authenticated ? "twofold" : nil,
            password: authenticated ? "mail-pass" : nil, loginOnly: loginOnly)
        defer { sink.stop() }
        try await body(sink)
    }

    @Test(arguments: ["starttls", "tls"])
    func deliversOverTLSWithAuthentication(_ security: String) async throws {
        try await Self.withSink(security) { sink in
            let provider = try SMTPEmailProvider(settings: Self.settings(sink, security: .init(rawValue: security)!))
            try await provider.deliver(Self.message)
            let received = try #require(try sink.messages().first)
            #expect(received.tls && received.user == "twofold")
            #expect(received.mailFrom == "no-reply@twofold.example")
            #expect(received.recipients == ["alice@example.com"])
            #expect(received.data.contains("Subject: Your Twofold code\r\n"))
            #expect(received.data.contains("From: no-reply@twofold.example\r\n"))
            #expect(received.data.contains("To: alice@example.com\r\n"))
            #expect(received.data.contains("Message-ID: <"))
            #expect(
                received.data.contains("\r\n\r\nYour Twofold code is 123456.\r\n.A line that starts with a dot\r\nBye"),
                "dot-stuffing is undone by the server, so the text arrives as written")
        }
    }

    @Test func authenticatesWithLoginWhenPlainIsNotOffered() async throws {
        try await Self.withSink("starttls", loginOnly: true) { sink in
            try await SMTPEmailProvider(settings: Self.settings(sink, security: .starttls)).deliver(Self.message)
            let received = try #require(try sink.messages().first)
            #expect(received.tls && received.user == "twofold")
        }
    }

    @Test func deliversInClearToARelayThatNeedsNoPassword() async throws {
        try await Self.withSink("none", authenticated: false) { sink in
            try await SMTPEmailProvider(settings: Self.settings(sink, security: .none)).deliver(Self.message)
            let received = try #require(try sink.messages().first)
            #expect(!received.tls && received.user == nil)
        }
    }

    @Test func refusesToGoOnInClearWhenSTARTTLSIsNotOffered() async throws {
        try await Self.withSink("none", authenticated: false) { sink in
            var settings = Self.settings(sink, security: .starttls)
            settings.caFile = nil
            await #expect(throws: DeliveryError.self) {
                try await SMTPEmailProvider(settings: settings).deliver(Self.message)
            }
            let received = try sink.messages()
            #expect(received.isEmpty)
        }
    }

    @Test func aWrongPasswordOrAnUntrustedCertificateDeliversNothing() async throws {
        try await Self.withSink("starttls") { sink in
            var wrong = Self.settings(sink, security: .starttls)
            wrong.password = "not it"
            let refused = await #expect(throws: DeliveryError.self) {
                try await SMTPEmailProvider(settings: wrong).deliver(Self.message)
            }
            #expect(refused?.description == "SMTP AUTH PLAIN answered 535", "the reply code, never the password")
            await #expect(throws: (any Error).self) {
                try await SMTPEmailProvider(settings: Self.settings(sink, security: .starttls, trust: false))
                    .deliver(Self.message)
            }
            let received = try sink.messages()
            #expect(received.isEmpty)
        }
    }

    @Test func anSMTPServerThatIsDownAtFirstGetsTheCodeWhenItComesBack() async throws {
        guard let python = TestPython.find() else { return }
        let clock = TestClock()
        let port = SMTPSink.freePort()
        try await withTestApp(clock: clock) { app in
            let settings = Configuration.SMTPSettings(
                host: "127.0.0.1", port: port, security: .none, from: "no-reply@twofold.example")
            let provider = try SMTPEmailProvider(settings: settings)
            let worker = DeliveryWorker(
                store: SQLOutboxStore(database: app.twofold.database), sms: RecordingProvider(), email: provider,
                secrets: app.twofold.secrets)
            try await app.twofold.outbox.enqueue(
                .email, to: "alice@example.com", subject: "Your Twofold code", body: "Your Twofold code is 654321.",
                now: clock.now)
            #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 0, "nobody listens")

            let sink = try SMTPSink(python: python, security: "none", port: port)
            defer { sink.stop() }
            clock.advance(by: 2)
            #expect(try await worker.runOnce(now: clock.now, logger: app.logger) == 1)
            let received = try #require(try sink.messages().first)
            #expect(received.data.contains("Your Twofold code is 654321."))
        }
    }

    @Test func headersCannotBeInjected() throws {
        #expect(throws: DeliveryError.self) {
            try SMTPMessage.render(
                from: "a@example.com", to: "b@example.com\r\nBcc: c@example.com", subject: "s", body: "b", date: Date())
        }
        let text = try SMTPMessage.render(
            from: "a@example.com", to: "b@example.com", subject: "Grüße", body: "Привет",
            date: Date(timeIntervalSince1970: 0))
        #expect(text.contains("Subject: =?utf-8?B?R3LDvMOfZQ==?=\r\n"))
        #expect(text.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000\r\n"))
        #expect(text.contains("Content-Transfer-Encoding: base64\r\n\r\n0J/RgNC40LLQtdGC"))
    }
}
