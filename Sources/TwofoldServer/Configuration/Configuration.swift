import Crypto
import Foundation
import Logging

/// Every setting of the server, read once at start-up from the environment (see `.env.example`).
/// A wrong value stops start-up with a `ConfigurationError` naming the variable.
public struct Configuration: Sendable {
    /// `development` (the default) or `production`, from `TWOFOLD_ENV`.
    public enum Mode: String, Sendable { case development, production }

    /// Where state lives: an SQLite file in the data folder unless `DATABASE_URL` names PostgreSQL.
    public enum Database: Sendable, Equatable {
        case sqlite(path: String)
        case sqliteInMemory
        case postgres(url: String)
    }

    /// How log lines look: Vapor's console format or one JSON object per line.
    public enum LogFormat: String, Sendable { case text, json }

    public var mode: Mode
    public var host: String
    public var port: Int
    public var dataDirectory: URL
    public var database: Database
    /// How many connections this instance keeps to PostgreSQL for its requests
    /// (`TWOFOLD_POSTGRES_CONNECTIONS`, 1 to 1,000, default 16; opened as needed). Every instance
    /// also keeps up to one per core for its migrations (Fluent's), so instances × (this + cores) must
    /// stay below the server's `max_connections`. Not used with SQLite.
    public var postgresConnections: Int
    /// How long a request waits for a PostgreSQL connection while none is handed out to anyone
    /// before it is answered `503` (`TWOFOLD_POSTGRES_CONNECT_TIMEOUT`, in seconds, 1 to 300,
    /// default 3): a server cut off from its database answers quickly instead of holding every
    /// request. A wait behind a busy pool is not cut short. Raise it for a database whose
    /// connections are slow to open (far away, or on an overloaded machine).
    public var postgresConnectTimeout: Duration
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    /// The largest request body accepted, in bytes; larger ones get `413`.
    public var maxBodyBytes: Int
    /// bcrypt work factor for password hashes (12 by default; tests lower it).
    public var bcryptCost: Int
    /// Whether `POST /auth/register` is open.
    public var registrationEnabled: Bool
    /// How long a refresh token lives unused.
    public var refreshTokenLifetime: TimeInterval
    /// How long an access token lives (15 minutes by default).
    public var accessTokenLifetime: TimeInterval
    /// Take the client address from `X-Forwarded-For` (only behind a proxy that sets it).
    public var trustProxy: Bool
    /// How many proxies in front of the server append to `X-Forwarded-For`
    /// (`TWOFOLD_TRUSTED_PROXY_HOPS`, default 1): the client address is that many entries from
    /// the right, since everything left of what the proxies appended is the client's to write.
    public var trustedProxyHops: Int
    /// The issuer authenticator apps show next to the account.
    public var totpIssuer: String
    /// base64 of a 256-bit key for secrets at rest; `nil`: the data folder's `encryption.key`.
    public var encryptionKey: Data?
    /// Who delivers SMS: the console (development) or an HTTP webhook.
    public var smsProvider: SMSProvider
    /// Who delivers email: the console (development) or an SMTP server.
    public var emailProvider: EmailProvider
    /// Apple's push service for "Approve on your phone" (`TWOFOLD_APNS_*`); `nil`: off, and phones
    /// learn of requests only while they ask.
    public var apns: APNsSettings?
    /// Whether this instance runs the delivery worker and housekeeping (`TWOFOLD_BACKGROUND_JOBS`);
    /// switch off on instances that should only answer requests.
    public var runsBackgroundJobs: Bool
    /// Seed 001's `disallowPinChangeWithBiometric` (`TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC`):
    /// when `true`, a biometric verification neither unblocks a device PIN nor may stand in for
    /// the old PIN when changing it.
    public var disallowPinChangeWithBiometric: Bool
    /// Throttles, lockouts, lifetimes and cooldowns (`ProductRules`).
    public var rules: ProductRules
    /// For tests of the built server (`TWOFOLD_TEST_CLOCK_FILE`, development only): a file holding
    /// a number of seconds the server's clock runs ahead of the real one, read on every reading
    /// of the clock, so a test moves the server's time (a step-up going stale, a cooldown passing)
    /// by writing a larger number instead of waiting. Refused in production.
    public var testClockFile: String?
    /// Passkeys: the relying party, its origins and what it asks of authenticators.
    public var webAuthn: WebAuthnSettings

    /// Where and as whom notifications go to Apple (token authentication, a `.p8` key).
    public struct APNsSettings: Sendable, Equatable {
        /// The `.p8` key file Apple gave (PKCS #8 PEM of a P-256 key).
        public var keyFile: String
        /// The key's 10-character ID, and the team's.
        public var keyID: String
        public var teamID: String
        /// The app's bundle ID (`apns-topic`).
        public var topic: String
        /// `https://api.push.apple.com`, the sandbox's, or another `https://` base URL.
        public var server: String
        /// A PEM file of extra certificate authorities to trust, beside the system's.
        public var caFile: String?

        public init(
            keyFile: String, keyID: String, teamID: String, topic: String,
            server: String = "https://api.push.apple.com", caFile: String? = nil
        ) {
            (self.keyFile, self.keyID, self.teamID, self.topic, self.server, self.caFile) =
                (keyFile, keyID, teamID, topic, server, caFile)
        }
    }

    /// `TWOFOLD_SMS_PROVIDER`.
    public enum SMSProvider: Sendable, Equatable {
        /// No SMS: the SMS factor is not offered.
        case disabled
        case console
        /// `TWOFOLD_SMS_WEBHOOK_URL`, optional `TWOFOLD_SMS_WEBHOOK_SECRET`.
        case webhook(url: String, secret: String?)
    }

    /// `TWOFOLD_EMAIL_PROVIDER`.
    public enum EmailProvider: Sendable, Equatable {
        /// No email: the email factor is not offered.
        case disabled
        case console
        /// `TWOFOLD_SMTP_*` and `TWOFOLD_EMAIL_FROM`.
        case smtp(SMTPSettings)
    }

    /// Where and how email is handed over (RFC 5321).
    public struct SMTPSettings: Sendable, Equatable {
        public enum Security: String, Sendable, Equatable, CaseIterable {
            /// Plain TCP (a relay on the same host or network); no password is ever sent this way.
            case none
            /// Plain TCP upgraded with STARTTLS before anything else is sent (port 587).
            case starttls
            /// TLS from the first byte (port 465).
            case tls
        }

        public var host: String
        public var port: Int
        public var security: Security
        /// Both or neither: AUTH PLAIN (or LOGIN) after TLS.
        public var username: String?
        public var password: String?
        /// The sender address (`From:` and `MAIL FROM`).
        public var from: String
        /// A PEM file of extra certificate authorities to trust (a private relay), beside the system's.
        public var caFile: String?

        public init(
            host: String, port: Int, security: Security, username: String? = nil, password: String? = nil,
            from: String, caFile: String? = nil
        ) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
            self.from = from
            self.caFile = caFile
        }
    }

    public init(
        mode: Mode = .development,
        host: String = "127.0.0.1",
        port: Int = 8080,
        dataDirectory: URL,
        database: Database,
        postgresConnections: Int = Configuration.defaultPostgresConnections,
        postgresConnectTimeout: Duration = .seconds(3),
        logLevel: Logger.Level = .info,
        logFormat: LogFormat = .text,
        maxBodyBytes: Int = 64 * 1024,
        bcryptCost: Int = 12,
        registrationEnabled: Bool = true,
        refreshTokenLifetime: TimeInterval = 30 * 24 * 3600,
        accessTokenLifetime: TimeInterval = 15 * 60,
        trustProxy: Bool = false,
        trustedProxyHops: Int = 1,
        totpIssuer: String = "Twofold",
        encryptionKey: Data? = nil,
        smsProvider: SMSProvider = .console,
        emailProvider: EmailProvider = .console,
        apns: APNsSettings? = nil,
        runsBackgroundJobs: Bool = true,
        disallowPinChangeWithBiometric: Bool = false,
        rules: ProductRules = ProductRules(),
        webAuthn: WebAuthnSettings? = nil,
        testClockFile: String? = nil
    ) {
        self.mode = mode
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.database = database
        self.postgresConnections = postgresConnections
        self.postgresConnectTimeout = postgresConnectTimeout
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.maxBodyBytes = maxBodyBytes
        self.bcryptCost = bcryptCost
        self.registrationEnabled = registrationEnabled
        self.refreshTokenLifetime = refreshTokenLifetime
        self.accessTokenLifetime = accessTokenLifetime
        self.trustProxy = trustProxy
        self.trustedProxyHops = trustedProxyHops
        self.totpIssuer = totpIssuer
        self.encryptionKey = encryptionKey
        self.smsProvider = smsProvider
        self.emailProvider = emailProvider
        self.apns = apns
        self.runsBackgroundJobs = runsBackgroundJobs
        self.disallowPinChangeWithBiometric = disallowPinChangeWithBiometric
        self.rules = rules
        self.testClockFile = testClockFile
        self.webAuthn = webAuthn ?? WebAuthnSettings(origins: WebAuthnSettings.developmentOrigins(port: port))
    }

    /// `TWOFOLD_POSTGRES_CONNECTIONS`' default (how it was chosen, and how to size it: the
    /// operations guide).
    public static let defaultPostgresConnections = 16

    /// Reads the configuration from environment variables. Relative paths are resolved against
    /// `workingDirectory`.
    public static func load(
        from environment: [String: String],
        workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    ) throws(ConfigurationError) -> Configuration {
        let reader = EnvironmentReader(environment)

        let mode = try reader.choice("TWOFOLD_ENV", default: Mode.development)
        let host = try reader.string("TWOFOLD_HOST", default: "127.0.0.1") { !$0.isEmpty && !$0.contains(" ") }
        let port = try reader.integer("TWOFOLD_PORT", default: 8080, in: 1...65535)
        let dataPath = try reader.string("TWOFOLD_DATA_DIR", default: "twofold-data") { !$0.isEmpty }
        let dataDirectory = resolve(dataPath, against: workingDirectory)

        let database: Database
        if let url = reader.optional("DATABASE_URL") {
            if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
                database = .postgres(url: url)
            } else if url == "sqlite::memory:" {
                database = .sqliteInMemory
            } else if url.hasPrefix("sqlite://"), url.count > "sqlite://".count {
                let path = String(url.dropFirst("sqlite://".count))
                database = .sqlite(path: resolve(path, against: workingDirectory).path)
            } else {
                throw ConfigurationError(
                    variable: "DATABASE_URL",
                    message: "must start with postgres://, postgresql:// or sqlite://, or be sqlite::memory:")
            }
        } else {
            database = .sqlite(path: dataDirectory.appendingPathComponent("twofold.sqlite").path)
        }

        let postgresConnections = try reader.integer(
            "TWOFOLD_POSTGRES_CONNECTIONS", default: defaultPostgresConnections, in: 1...1000)
        let postgresConnectTimeout = try reader.integer("TWOFOLD_POSTGRES_CONNECT_TIMEOUT", default: 3, in: 1...300)
        let logLevel = try reader.choice("TWOFOLD_LOG_LEVEL", default: Logger.Level.info)
        let logFormat = try reader.choice("TWOFOLD_LOG_FORMAT", default: LogFormat.text)
        let maxBodyBytes = try reader.integer(
            "TWOFOLD_MAX_BODY_BYTES", default: 64 * 1024, in: 1024...(16 * 1024 * 1024))

        let bcryptCost = try reader.integer("TWOFOLD_BCRYPT_COST", default: 12, in: 4...31)
        let registrationEnabled = try reader.boolean("TWOFOLD_REGISTRATION_ENABLED", default: true)
        let refreshDays = try reader.integer("TWOFOLD_REFRESH_TOKEN_DAYS", default: 30, in: 1...365)
        let accessSeconds = try reader.integer("TWOFOLD_ACCESS_TOKEN_SECONDS", default: 900, in: 60...3600)
        let trustProxy = try reader.boolean("TWOFOLD_TRUST_PROXY", default: false)
        let trustedProxyHops = try reader.integer("TWOFOLD_TRUSTED_PROXY_HOPS", default: 1, in: 1...10)
        let totpIssuer = try reader.string("TWOFOLD_TOTP_ISSUER", default: "Twofold") {
            !$0.contains(":") && $0.count <= 64
        }
        var encryptionKey: Data?
        if let text = reader.optional("TWOFOLD_ENCRYPTION_KEY") {
            guard let key = Data(base64Encoded: text), key.count == 32 else {
                throw ConfigurationError(
                    variable: "TWOFOLD_ENCRYPTION_KEY", message: "must be the base64 of 32 random bytes")
            }
            encryptionKey = key
        }

        let smsProvider: SMSProvider
        switch reader.optional("TWOFOLD_SMS_PROVIDER")?.lowercased() ?? "console" {
        case "disabled":
            smsProvider = .disabled
        case "console":
            smsProvider = .console
        case "webhook":
            guard let url = reader.optional("TWOFOLD_SMS_WEBHOOK_URL"),
                url.hasPrefix("https://") || url.hasPrefix("http://")
            else {
                throw ConfigurationError(
                    variable: "TWOFOLD_SMS_WEBHOOK_URL",
                    message: "must be an http(s) URL when TWOFOLD_SMS_PROVIDER=webhook")
            }
            smsProvider = .webhook(url: url, secret: reader.optional("TWOFOLD_SMS_WEBHOOK_SECRET"))
        case let other:
            throw ConfigurationError(
                variable: "TWOFOLD_SMS_PROVIDER",
                message: "must be disabled, console or webhook, not \(other.debugDescription)")
        }
        let emailProvider: EmailProvider
        switch reader.optional("TWOFOLD_EMAIL_PROVIDER")?.lowercased() ?? "console" {
        case "disabled":
            emailProvider = .disabled
        case "console":
            emailProvider = .console
        case "smtp":
            emailProvider = .smtp(try smtpSettings(reader))
        case let other:
            throw ConfigurationError(
                variable: "TWOFOLD_EMAIL_PROVIDER",
                message: "must be disabled, console or smtp, not \(other.debugDescription)")
        }
        let runsBackgroundJobs = try reader.boolean("TWOFOLD_BACKGROUND_JOBS", default: true)
        let disallowPinChangeWithBiometric = try reader.boolean(
            "TWOFOLD_DISALLOW_PIN_CHANGE_WITH_BIOMETRIC", default: false)
        let rules = try ProductRules.load(reader)
        if mode == .production, smsProvider == .console {
            throw ConfigurationError(
                variable: "TWOFOLD_SMS_PROVIDER",
                message: "is console, which prints codes to standard output; production needs a real provider")
        }
        if mode == .production, emailProvider == .console {
            throw ConfigurationError(
                variable: "TWOFOLD_EMAIL_PROVIDER",
                message: "is console, which prints codes to standard output; production needs a real provider")
        }
        let webAuthn = try WebAuthnSettings.load(reader, mode: mode, port: port)
        let testClockFile = reader.optional("TWOFOLD_TEST_CLOCK_FILE").map {
            resolve($0, against: workingDirectory).path
        }
        if mode == .production, testClockFile != nil {
            throw ConfigurationError(
                variable: "TWOFOLD_TEST_CLOCK_FILE", message: "moves the server's clock for tests; never in production")
        }

        return Configuration(
            mode: mode, host: host, port: port, dataDirectory: dataDirectory, database: database,
            postgresConnections: postgresConnections, postgresConnectTimeout: .seconds(postgresConnectTimeout),
            logLevel: logLevel, logFormat: logFormat,
            maxBodyBytes: maxBodyBytes, bcryptCost: bcryptCost,
            registrationEnabled: registrationEnabled, refreshTokenLifetime: TimeInterval(refreshDays) * 24 * 3600,
            accessTokenLifetime: TimeInterval(accessSeconds),
            trustProxy: trustProxy, trustedProxyHops: trustedProxyHops, totpIssuer: totpIssuer,
            encryptionKey: encryptionKey, smsProvider: smsProvider,
            emailProvider: emailProvider, apns: try apnsSettings(reader, workingDirectory: workingDirectory),
            runsBackgroundJobs: runsBackgroundJobs,
            disallowPinChangeWithBiometric: disallowPinChangeWithBiometric, rules: rules, webAuthn: webAuthn,
            testClockFile: testClockFile)
    }
}

/// `TWOFOLD_SMTP_HOST` (required), `TWOFOLD_SMTP_SECURITY` (default `starttls`), `TWOFOLD_SMTP_PORT`
/// (default 25, 587 or 465 by security), `TWOFOLD_SMTP_USERNAME` and `TWOFOLD_SMTP_PASSWORD`
/// (both or neither; never over `none`), `TWOFOLD_EMAIL_FROM` (required), `TWOFOLD_SMTP_CA_FILE`.
private func smtpSettings(_ reader: EnvironmentReader) throws(ConfigurationError) -> Configuration.SMTPSettings {
    guard let host = reader.optional("TWOFOLD_SMTP_HOST"), !host.contains(where: { $0.isWhitespace }) else {
        throw ConfigurationError(variable: "TWOFOLD_SMTP_HOST", message: "is required when TWOFOLD_EMAIL_PROVIDER=smtp")
    }
    let security = try reader.choice("TWOFOLD_SMTP_SECURITY", default: Configuration.SMTPSettings.Security.starttls)
    let defaultPort = [.none: 25, .starttls: 587, .tls: 465][security] ?? 587
    let port = try reader.integer("TWOFOLD_SMTP_PORT", default: defaultPort, in: 1...65535)
    let username = reader.optional("TWOFOLD_SMTP_USERNAME")
    let password = reader.optional("TWOFOLD_SMTP_PASSWORD")
    guard (username == nil) == (password == nil) else {
        throw ConfigurationError(
            variable: username == nil ? "TWOFOLD_SMTP_USERNAME" : "TWOFOLD_SMTP_PASSWORD",
            message: "must be set together with \(username == nil ? "TWOFOLD_SMTP_PASSWORD" : "TWOFOLD_SMTP_USERNAME")")
    }
    if security == .none, username != nil {
        throw ConfigurationError(
            variable: "TWOFOLD_SMTP_SECURITY",
            message: "is none, which would send TWOFOLD_SMTP_PASSWORD in clear; use starttls or tls")
    }
    guard let from = reader.optional("TWOFOLD_EMAIL_FROM"), InputValidation.email(from) != nil else {
        throw ConfigurationError(
            variable: "TWOFOLD_EMAIL_FROM", message: "must be an email address when TWOFOLD_EMAIL_PROVIDER=smtp")
    }
    let caFile = reader.optional("TWOFOLD_SMTP_CA_FILE")
    if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
        throw ConfigurationError(variable: "TWOFOLD_SMTP_CA_FILE", message: "names a file that cannot be read")
    }
    return Configuration.SMTPSettings(
        host: host, port: port, security: security, username: username, password: password, from: from,
        caFile: caFile)
}

/// `TWOFOLD_APNS_KEY_FILE`, `TWOFOLD_APNS_KEY_ID`, `TWOFOLD_APNS_TEAM_ID` and `TWOFOLD_APNS_TOPIC`
/// (all or none), `TWOFOLD_APNS_SERVER` (`production`, `sandbox` or an `https://` URL) and
/// `TWOFOLD_APNS_CA_FILE`. The key is read and checked now: a server that cannot sign does not start.
private func apnsSettings(_ reader: EnvironmentReader, workingDirectory: URL) throws(ConfigurationError)
    -> Configuration.APNsSettings?
{
    let names = ["TWOFOLD_APNS_KEY_FILE", "TWOFOLD_APNS_KEY_ID", "TWOFOLD_APNS_TEAM_ID", "TWOFOLD_APNS_TOPIC"]
    let values = names.map { reader.optional($0) }
    if values.allSatisfy({ $0 == nil }) {
        for other in ["TWOFOLD_APNS_SERVER", "TWOFOLD_APNS_CA_FILE"] where reader.optional(other) != nil {
            throw ConfigurationError(variable: other, message: "is set, but TWOFOLD_APNS_KEY_FILE and the rest are not")
        }
        return nil
    }
    guard let keyText = values[0], let keyID = values[1], let teamID = values[2], let topic = values[3] else {
        let missing = zip(names, values).first { $0.1 == nil }?.0 ?? names[0]
        throw ConfigurationError(
            variable: missing, message: "is required with the other TWOFOLD_APNS_ settings (all four, or none)")
    }
    let keyFile = resolve(keyText, against: workingDirectory).path
    guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8),
        (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil
    else {
        throw ConfigurationError(
            variable: "TWOFOLD_APNS_KEY_FILE", message: "must name a readable .p8 key (a P-256 key in PEM) from Apple")
    }
    for (name, value) in [("TWOFOLD_APNS_KEY_ID", keyID), ("TWOFOLD_APNS_TEAM_ID", teamID)]
    where value.count != 10 || !value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
        throw ConfigurationError(variable: name, message: "must be the 10 letters and digits Apple shows")
    }
    guard topic.count <= 255, topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.".contains($0)) })
    else {
        throw ConfigurationError(variable: "TWOFOLD_APNS_TOPIC", message: "must be the app's bundle ID")
    }
    let server: String
    switch reader.optional("TWOFOLD_APNS_SERVER") ?? "production" {
    case "production": server = "https://api.push.apple.com"
    case "sandbox": server = "https://api.sandbox.push.apple.com"
    case let url where url.hasPrefix("https://") && URL(string: url)?.host != nil && !url.contains("?"):
        server = url.hasSuffix("/") ? String(url.dropLast()) : url
    default:
        throw ConfigurationError(
            variable: "TWOFOLD_APNS_SERVER", message: "must be production, sandbox or an https:// URL")
    }
    let caFile = reader.optional("TWOFOLD_APNS_CA_FILE").map { resolve($0, against: workingDirectory).path }
    if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
        throw ConfigurationError(variable: "TWOFOLD_APNS_CA_FILE", message: "names a file that cannot be read")
    }
    return Configuration.APNsSettings(
        keyFile: keyFile, keyID: keyID, teamID: teamID, topic: topic, server: server, caFile: caFile)
}

/// An absolute path as is; a relative one inside `directory`.
private func resolve(_ path: String, against directory: URL) -> URL {
    let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
    return url.standardizedFileURL
}

/// A setting that could not be used; the message names the variable and what it accepts.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let variable: String
    public let message: String

    public var description: String { "configuration: \(variable) \(message)" }
}

/// Typed access to environment variables; every failure names its variable.
struct EnvironmentReader {
    let values: [String: String]

    init(_ values: [String: String]) { self.values = values }

    func optional(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        return value
    }

    func string(_ name: String, default fallback: String, valid: (String) -> Bool) throws(ConfigurationError)
        -> String
    {
        guard let value = optional(name) else { return fallback }
        guard valid(value) else { throw ConfigurationError(variable: name, message: "has an invalid value") }
        return value
    }

    func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws(ConfigurationError)
        -> Int
    {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(
                variable: name,
                message:
                    "must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(text.debugDescription)"
            )
        }
        return value
    }

    func boolean(_ name: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let text = optional(name) else { return fallback }
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default:
            throw ConfigurationError(variable: name, message: "must be true or false, not \(text.debugDescription)")
        }
    }

    func choice<Value: RawRepresentable & CaseIterable>(_ name: String, default fallback: Value)
        throws(ConfigurationError) -> Value where Value.RawValue == String
    {
        guard let text = optional(name) else { return fallback }
        guard let value = Value(rawValue: text.lowercased()) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(
                variable: name, message: "must be one of \(allowed), not \(text.debugDescription)")
        }
        return value
    }
}

extension Configuration.Mode: CaseIterable {}
extension Configuration.LogFormat: CaseIterable {}

extension Configuration {
    /// Where people reach this server's pages, for the links in its messages: the first web
    /// origin passkeys are served at (`TWOFOLD_WEBAUTHN_ORIGINS`), without a trailing slash.
    var publicURL: String {
        let web = webAuthn.origins.first { $0.hasPrefix("https://") || $0.hasPrefix("http://") }
        let origin = web ?? "http://localhost:\(port)"
        return origin.hasSuffix("/") ? String(origin.dropLast()) : origin
    }

    /// Whether this server delivers `channel` (its provider is not `disabled`).
    func delivers(_ channel: DeliveryChannel) -> Bool {
        channel == .sms ? smsProvider != .disabled : emailProvider != .disabled
    }
}
