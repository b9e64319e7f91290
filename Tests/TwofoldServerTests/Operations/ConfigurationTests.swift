import Crypto
import Foundation
import Testing
import TwofoldTestSupport
import VaporTesting

@testable import TwofoldServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ConfigurationTests {
    let cwd = URL(fileURLWithPath: "/srv/twofold")

    @Test func nothingConfiguredMeansLocalSQLiteInTheDataFolder() throws {
        let configuration = try Configuration.load(from: [:], workingDirectory: cwd)
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.mode == .development)
        #expect(configuration.dataDirectory.path == "/srv/twofold/twofold-data")
        #expect(configuration.database == .sqlite(path: "/srv/twofold/twofold-data/twofold.sqlite"))
        #expect(configuration.postgresConnections == 16)
        #expect(configuration.postgresConnectTimeout == .seconds(3))
        #expect(configuration.accessTokenLifetime == 900)
    }

    @Test func variablesOverrideTheDefaults() throws {
        let configuration = try Configuration.load(
            from: [
                "TWOFOLD_HOST": "0.0.0.0", "TWOFOLD_PORT": "9090", "TWOFOLD_DATA_DIR": "/var/lib/twofold",
                "DATABASE_URL": "postgres://twofold:pw@db:5432/twofold", "TWOFOLD_ENV": "production",
                "TWOFOLD_LOG_FORMAT": "json", "TWOFOLD_LOG_LEVEL": "debug", "TWOFOLD_SMS_PROVIDER": "disabled",
                "TWOFOLD_EMAIL_PROVIDER": "disabled", "TWOFOLD_WEBAUTHN_RP_ID": "example.com",
                "TWOFOLD_WEBAUTHN_ORIGINS": "https://example.com, android:apk-key-hash:abc",
                "TWOFOLD_POSTGRES_CONNECTIONS": "12", "TWOFOLD_POSTGRES_CONNECT_TIMEOUT": "20",
                "TWOFOLD_ACCESS_TOKEN_SECONDS": "120",
            ], workingDirectory: cwd)
        #expect(configuration.accessTokenLifetime == 120)
        #expect(configuration.postgresConnections == 12)
        #expect(configuration.postgresConnectTimeout == .seconds(20))
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9090)
        #expect(configuration.dataDirectory.path == "/var/lib/twofold")
        #expect(configuration.database == .postgres(url: "postgres://twofold:pw@db:5432/twofold"))
        #expect(configuration.mode == .production)
        #expect(configuration.logFormat == .json)
        #expect(configuration.logLevel == .debug)
    }

    static let badValues: [(String, String)] = [
        ("TWOFOLD_PORT", "eighty"), ("TWOFOLD_PORT", "0"), ("TWOFOLD_PORT", "70000"),
        ("TWOFOLD_ENV", "staging"), ("DATABASE_URL", "mysql://x"), ("TWOFOLD_LOG_LEVEL", "loud"),
        ("TWOFOLD_LOG_FORMAT", "xml"), ("TWOFOLD_HOST", "a b"), ("TWOFOLD_MAX_BODY_BYTES", "12"),
        ("TWOFOLD_BCRYPT_COST", "3"), ("TWOFOLD_REGISTRATION_ENABLED", "maybe"), ("TWOFOLD_REFRESH_TOKEN_DAYS", "0"),
        ("TWOFOLD_TRUST_PROXY", "sometimes"), ("TWOFOLD_TOTP_ISSUER", "a:b"), ("TWOFOLD_ENCRYPTION_KEY", "c2hvcnQ="),
        ("TWOFOLD_SMS_PROVIDER", "pigeon"), ("TWOFOLD_EMAIL_PROVIDER", "fax"),
        ("TWOFOLD_WEBAUTHN_RP_ID", "https://example.com"), ("TWOFOLD_WEBAUTHN_RP_ID", "a..b"),
        ("TWOFOLD_WEBAUTHN_ORIGINS", "example.com"), ("TWOFOLD_WEBAUTHN_ORIGINS", "https://example.com/login"),
        ("TWOFOLD_WEBAUTHN_ORIGINS", " , "), ("TWOFOLD_WEBAUTHN_TOP_ORIGINS", "ftp://x"),
        ("TWOFOLD_WEBAUTHN_USER_VERIFICATION", "always"), ("TWOFOLD_WEBAUTHN_ATTESTATION", "full"),
        ("TWOFOLD_WEBAUTHN_REQUIRE_ATTESTATION", "true"), ("TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS", "/nonexistent.pem"),
        ("TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS", "10"), ("TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS", "601"),
        ("TWOFOLD_POSTGRES_CONNECTIONS", "0"), ("TWOFOLD_POSTGRES_CONNECTIONS", "1001"),
        ("TWOFOLD_POSTGRES_CONNECTIONS", "many"), ("TWOFOLD_POSTGRES_CONNECT_TIMEOUT", "0"),
        ("TWOFOLD_POSTGRES_CONNECT_TIMEOUT", "301"), ("TWOFOLD_POSTGRES_CONNECT_TIMEOUT", "2.5"),
        ("TWOFOLD_ACCESS_TOKEN_SECONDS", "59"), ("TWOFOLD_ACCESS_TOKEN_SECONDS", "3601"),
        ("TWOFOLD_APPLE_APP_IDS", "dev.twofold.app"), ("TWOFOLD_APPLE_APP_IDS", "abcde12345.dev.twofold.app"),
        ("TWOFOLD_APPLE_APP_IDS", "ABCDE12345."), ("TWOFOLD_APPLE_APP_IDS", "ABCDE12345.app id"),
    ]

    @Test("a bad value names its variable", arguments: badValues)
    func badValueNamesTheVariable(setting: (String, String)) {
        do {
            _ = try Configuration.load(from: [setting.0: setting.1], workingDirectory: cwd)
            Issue.record("accepted \(setting.0)=\(setting.1)")
        } catch {
            #expect(error.variable == setting.0)
            #expect(error.description.contains(setting.0))
        }
    }

    @Test func productionRefusesConsoleDelivery() throws {
        do {
            _ = try Configuration.load(from: ["TWOFOLD_ENV": "production"], workingDirectory: cwd)
            Issue.record("production started with console delivery")
        } catch {
            #expect(error.variable == "TWOFOLD_SMS_PROVIDER")
        }
        do {
            _ = try Configuration.load(
                from: [
                    "TWOFOLD_ENV": "production", "TWOFOLD_SMS_PROVIDER": "webhook",
                    "TWOFOLD_SMS_WEBHOOK_URL": "https://sms.example.com/send",
                ], workingDirectory: cwd)
            Issue.record("production started with console email")
        } catch {
            #expect(error.variable == "TWOFOLD_EMAIL_PROVIDER")
        }
    }

    @Test func passkeyDefaultsServeLocalhost() throws {
        let configuration = try Configuration.load(from: ["TWOFOLD_PORT": "9000"], workingDirectory: cwd)
        #expect(configuration.webAuthn.rpID == "localhost")
        #expect(configuration.webAuthn.origins == ["http://localhost:9000"])
        #expect(configuration.webAuthn.userVerification == .preferred)
        #expect(configuration.webAuthn.attestation == .none)
        #expect(configuration.webAuthn.challengeLifetime == 120)
        let set = try Configuration.load(
            from: [
                "TWOFOLD_WEBAUTHN_RP_ID": "Example.COM", "TWOFOLD_WEBAUTHN_RP_NAME": "Example",
                "TWOFOLD_WEBAUTHN_ORIGINS": "https://example.com,https://login.example.com:8443",
                "TWOFOLD_WEBAUTHN_USER_VERIFICATION": "required", "TWOFOLD_WEBAUTHN_ATTESTATION": "direct",
                "TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS": "60",
            ], workingDirectory: cwd)
        #expect(set.webAuthn.rpID == "example.com")
        #expect(set.webAuthn.rpName == "Example")
        #expect(set.webAuthn.origins == ["https://example.com", "https://login.example.com:8443"])
        #expect(set.webAuthn.userVerification == .required)
        #expect(set.webAuthn.attestation == .direct)
        #expect(set.webAuthn.challengeLifetime == 60)
    }

    @Test func productionRefusesPasskeysWithoutAnRPIDOrOverHTTP() throws {
        let base = [
            "TWOFOLD_ENV": "production", "TWOFOLD_SMS_PROVIDER": "disabled", "TWOFOLD_EMAIL_PROVIDER": "disabled",
        ]
        do {
            _ = try Configuration.load(from: base, workingDirectory: cwd)
            Issue.record("production started without a passkey RP ID")
        } catch {
            #expect(error.variable == "TWOFOLD_WEBAUTHN_RP_ID")
        }
        do {
            _ = try Configuration.load(
                from: base.merging(["TWOFOLD_WEBAUTHN_RP_ID": "example.com"]) { $1 }, workingDirectory: cwd)
            Issue.record("production started with the http://localhost origin")
        } catch {
            #expect(error.variable == "TWOFOLD_WEBAUTHN_ORIGINS")
        }
        let served = try Configuration.load(
            from: base.merging([
                "TWOFOLD_WEBAUTHN_RP_ID": "example.com", "TWOFOLD_WEBAUTHN_ORIGINS": "https://example.com",
            ]) { $1 }, workingDirectory: cwd)
        #expect(served.webAuthn.origins == ["https://example.com"])
    }

    @Test func theWebhookProviderTakesItsURLAndSecret() throws {
        let configuration = try Configuration.load(
            from: [
                "TWOFOLD_SMS_PROVIDER": "webhook", "TWOFOLD_SMS_WEBHOOK_URL": "https://sms.example.com/send",
                "TWOFOLD_SMS_WEBHOOK_SECRET": "s3cret",
            ], workingDirectory: cwd)
        #expect(configuration.smsProvider == .webhook(url: "https://sms.example.com/send", secret: "s3cret"))
        do {
            _ = try Configuration.load(from: ["TWOFOLD_SMS_PROVIDER": "webhook"], workingDirectory: cwd)
            Issue.record("webhook without a URL")
        } catch {
            #expect(error.variable == "TWOFOLD_SMS_WEBHOOK_URL")
        }
    }

    @Test func theSMTPProviderTakesItsServerAndRefusesAPasswordInClear() throws {
        let configuration = try Configuration.load(
            from: [
                "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "smtp.example.com",
                "TWOFOLD_SMTP_USERNAME": "twofold", "TWOFOLD_SMTP_PASSWORD": "pw",
                "TWOFOLD_EMAIL_FROM": "no-reply@example.com",
            ], workingDirectory: cwd)
        #expect(
            configuration.emailProvider
                == .smtp(
                    .init(
                        host: "smtp.example.com", port: 587, security: .starttls, username: "twofold", password: "pw",
                        from: "no-reply@example.com")))
        let tls = try Configuration.load(
            from: [
                "TWOFOLD_EMAIL_PROVIDER": "smtp", "TWOFOLD_SMTP_HOST": "smtp.example.com",
                "TWOFOLD_SMTP_SECURITY": "tls", "TWOFOLD_EMAIL_FROM": "no-reply@example.com",
            ], workingDirectory: cwd)
        #expect(
            tls.emailProvider
                == .smtp(.init(host: "smtp.example.com", port: 465, security: .tls, from: "no-reply@example.com")))
        let refused: [([String: String], String)] = [
            (["TWOFOLD_EMAIL_FROM": "a@example.com"], "TWOFOLD_SMTP_HOST"),
            (["TWOFOLD_SMTP_HOST": "smtp.example.com"], "TWOFOLD_EMAIL_FROM"),
            (
                [
                    "TWOFOLD_SMTP_HOST": "h.example", "TWOFOLD_EMAIL_FROM": "a@example.com",
                    "TWOFOLD_SMTP_USERNAME": "u",
                ],
                "TWOFOLD_SMTP_PASSWORD"
            ),
            (
                [
                    "TWOFOLD_SMTP_HOST": "h.example", "TWOFOLD_EMAIL_FROM": "a@example.com",
                    "TWOFOLD_SMTP_SECURITY": "none",
                    "TWOFOLD_SMTP_USERNAME": "u", "TWOFOLD_SMTP_PASSWORD": "p",
                ], "TWOFOLD_SMTP_SECURITY"
            ),
            (
                [
                    "TWOFOLD_SMTP_HOST": "h.example", "TWOFOLD_EMAIL_FROM": "a@example.com",
                    "TWOFOLD_SMTP_SECURITY": "ssl",
                ],
                "TWOFOLD_SMTP_SECURITY"
            ),
            (
                [
                    "TWOFOLD_SMTP_HOST": "h.example", "TWOFOLD_EMAIL_FROM": "a@example.com",
                    "TWOFOLD_SMTP_CA_FILE": "/nope",
                ],
                "TWOFOLD_SMTP_CA_FILE"
            ),
        ]
        for (variables, named) in refused {
            do {
                _ = try Configuration.load(
                    from: variables.merging(["TWOFOLD_EMAIL_PROVIDER": "smtp"]) { a, _ in a }, workingDirectory: cwd)
                Issue.record("accepted \(variables)")
            } catch {
                #expect(error.variable == named)
            }
        }
    }

    @Test func applesPushServiceTakesAllFourSettingsOrNone() throws {
        let folder = try BuildProducts.temporaryDirectory("apns-settings")
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("AuthKey.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: key, atomically: true, encoding: .utf8)
        let notAKey = folder.appendingPathComponent("not-a-key.p8")
        try "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".write(
            to: notAKey, atomically: true, encoding: .utf8)
        let all = [
            "TWOFOLD_APNS_KEY_FILE": key.path, "TWOFOLD_APNS_KEY_ID": "ABCDE12345",
            "TWOFOLD_APNS_TEAM_ID": "TEAM123456",
            "TWOFOLD_APNS_TOPIC": "dev.twofold.app",
        ]
        #expect(try Configuration.load(from: [:], workingDirectory: cwd).apns == nil)
        #expect(
            try Configuration.load(from: all, workingDirectory: cwd).apns
                == .init(
                    keyFile: key.path, keyID: "ABCDE12345", teamID: "TEAM123456", topic: "dev.twofold.app",
                    server: "https://api.push.apple.com"))
        let sandbox = all.merging(["TWOFOLD_APNS_SERVER": "sandbox"]) { $1 }
        #expect(
            try Configuration.load(from: sandbox, workingDirectory: cwd).apns?.server
                == "https://api.sandbox.push.apple.com")
        let refused: [([String: String], String)] = [
            (all.filter { $0.key != "TWOFOLD_APNS_TEAM_ID" }, "TWOFOLD_APNS_TEAM_ID"),
            (["TWOFOLD_APNS_SERVER": "sandbox"], "TWOFOLD_APNS_SERVER"),
            (all.merging(["TWOFOLD_APNS_KEY_FILE": notAKey.path]) { $1 }, "TWOFOLD_APNS_KEY_FILE"),
            (all.merging(["TWOFOLD_APNS_KEY_FILE": "/nope.p8"]) { $1 }, "TWOFOLD_APNS_KEY_FILE"),
            (all.merging(["TWOFOLD_APNS_KEY_ID": "short"]) { $1 }, "TWOFOLD_APNS_KEY_ID"),
            (all.merging(["TWOFOLD_APNS_TOPIC": "dev twofold"]) { $1 }, "TWOFOLD_APNS_TOPIC"),
            (all.merging(["TWOFOLD_APNS_SERVER": "http://127.0.0.1:1"]) { $1 }, "TWOFOLD_APNS_SERVER"),
            (all.merging(["TWOFOLD_APNS_CA_FILE": "/nope.pem"]) { $1 }, "TWOFOLD_APNS_CA_FILE"),
        ]
        for (variables, named) in refused {
            do {
                _ = try Configuration.load(from: variables, workingDirectory: cwd)
                Issue.record("accepted \(variables)")
            } catch {
                #expect(error.variable == named, "\(variables)")
            }
        }
    }

    @Test func everyVariableIsListedInEnvExample() throws {
        let example = try String(
            contentsOf: BuildProducts.repositoryRoot.appendingPathComponent(".env.example"), encoding: .utf8)
        for variable in [
            "TWOFOLD_ENV", "TWOFOLD_HOST", "TWOFOLD_PORT", "TWOFOLD_DATA_DIR", "DATABASE_URL", "TWOFOLD_LOG_LEVEL",
            "TWOFOLD_LOG_FORMAT", "TWOFOLD_MAX_BODY_BYTES", "TWOFOLD_BCRYPT_COST", "TWOFOLD_REGISTRATION_ENABLED",
            "TWOFOLD_REFRESH_TOKEN_DAYS", "TWOFOLD_TRUST_PROXY", "TWOFOLD_TOTP_ISSUER", "TWOFOLD_ENCRYPTION_KEY",
            "TWOFOLD_SMS_PROVIDER", "TWOFOLD_SMS_WEBHOOK_URL", "TWOFOLD_SMS_WEBHOOK_SECRET", "TWOFOLD_EMAIL_PROVIDER",
            "TWOFOLD_BACKGROUND_JOBS", "TWOFOLD_SMTP_HOST", "TWOFOLD_SMTP_PORT", "TWOFOLD_SMTP_USERNAME",
            "TWOFOLD_SMTP_PASSWORD", "TWOFOLD_SMTP_SECURITY", "TWOFOLD_SMTP_CA_FILE", "TWOFOLD_EMAIL_FROM",
            "TWOFOLD_APNS_KEY_FILE", "TWOFOLD_APNS_KEY_ID", "TWOFOLD_APNS_TEAM_ID", "TWOFOLD_APNS_TOPIC",
            "TWOFOLD_APNS_SERVER", "TWOFOLD_APNS_CA_FILE", "TWOFOLD_WEBAUTHN_RP_ID", "TWOFOLD_WEBAUTHN_RP_NAME",
            "TWOFOLD_WEBAUTHN_ORIGINS",
            "TWOFOLD_WEBAUTHN_TOP_ORIGINS", "TWOFOLD_WEBAUTHN_USER_VERIFICATION", "TWOFOLD_WEBAUTHN_ATTESTATION",
            "TWOFOLD_WEBAUTHN_REQUIRE_ATTESTATION", "TWOFOLD_WEBAUTHN_ATTESTATION_ROOTS",
            "TWOFOLD_WEBAUTHN_CHALLENGE_SECONDS", "TWOFOLD_POSTGRES_CONNECTIONS",
            "TWOFOLD_POSTGRES_CONNECT_TIMEOUT",
        ] {
            #expect(example.contains("\(variable)="), "\(variable) missing from .env.example")
        }
    }
}

/// `TWOFOLD_TEST_CLOCK_FILE`: the built server's clock, moved by tests instead of waiting.
struct TestClockFileTests {
    @Test func theServersClockRunsAheadByWhatTheFileHolds() throws {
        let folder = try BuildProducts.temporaryDirectory("twofold-clock")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("clock")
        let clock = TestClockFile(path: file.path)
        // Missing: the real time.
        #expect(abs(clock.now().timeIntervalSinceNow) < 5)
        try Data("61.5\n".utf8).write(to: file)
        #expect(abs(clock.now().timeIntervalSinceNow - 61.5) < 5)
        try Data("3600".utf8).write(to: file)
        #expect(abs(clock.now().timeIntervalSinceNow - 3600) < 5)
        // Not a number, backwards, or so far ahead that the server's integer times would
        // overflow: the real time again, never a trap.
        for text in ["soon", "nan", "inf", "", "-5", "-1e19", "1e300", "2e16", String(repeating: "9", count: 400)] {
            try Data(text.utf8).write(to: file)
            #expect(abs(clock.now().timeIntervalSinceNow) < 5, "\(text)")
        }
        // Not a regular file (a folder, a FIFO with no writer): the real time, without waiting.
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        #expect(abs(clock.now().timeIntervalSinceNow) < 5)
        let fifo = folder.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(abs(TestClockFile(path: fifo.path).now().timeIntervalSinceNow) < 5)
    }

    @Test func noApplicationInProductionTakesAMovableClock() async throws {
        let folder = try BuildProducts.temporaryDirectory("twofold-clock")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = Configuration(
            mode: .production, dataDirectory: folder.appendingPathComponent("data"),
            database: .sqlite(path: folder.appendingPathComponent("twofold.sqlite").path),
            smsProvider: .disabled, emailProvider: .disabled, runsBackgroundJobs: false,
            testClockFile: folder.appendingPathComponent("clock").path)
        await #expect(throws: ConfigurationError.self) {
            try await withApp { app in try await configure(app, with: configuration) }
        }
    }

    @Test func productionRefusesAMovableClock() throws {
        let environment = [
            "TWOFOLD_ENV": "production", "TWOFOLD_TEST_CLOCK_FILE": "/tmp/clock",
            "TWOFOLD_SMS_PROVIDER": "disabled", "TWOFOLD_EMAIL_PROVIDER": "disabled",
            "TWOFOLD_WEBAUTHN_RP_ID": "example.com", "TWOFOLD_WEBAUTHN_ORIGINS": "https://example.com",
        ]
        #expect(throws: ConfigurationError.self) { try Configuration.load(from: environment) }
        var development = environment
        development["TWOFOLD_ENV"] = "development"
        #expect(try Configuration.load(from: development).testClockFile == "/tmp/clock")
    }
}
